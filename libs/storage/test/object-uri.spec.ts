import { joinLocation, parseS3Uri } from '../src/object-uri';
import { withoutEdgeSlashes, withoutTrailingSlashes } from '@app/catalog';

describe('locations joined under an object store root', () => {
  it('joins segments with single slashes, whatever slashes they bring', () => {
    expect(joinLocation('s3://b/wh/', '/default/', 'ns//', 't.lance')).toBe('s3://b/wh/default/ns/t.lance');
    expect(joinLocation('s3://b', '')).toBe('s3://b/');
    expect(withoutTrailingSlashes('a/b///')).toBe('a/b');
    expect(withoutTrailingSlashes('///')).toBe('');
    expect(withoutEdgeSlashes('//a//b//')).toBe('a//b');
    expect(parseS3Uri(joinLocation('s3://bucket/root', 'x'))).toEqual({ bucket: 'bucket', key: 'root/x' });
  });

  // A location is the caller's: a pattern such as /\/+$/ takes time quadratic in a run of slashes
  // that does not end it (200,000 of them held the event loop about a minute); a scan takes none.
  // Jest cannot stop a synchronous call at its timeout, so the bound is asserted: a scan takes
  // milliseconds here, the quadratic pattern about 40 s.
  it('joins a segment holding a long run of slashes at once', () => {
    const run = '/'.repeat(200_000);
    const started = performance.now();
    expect(joinLocation(`s3://b/wh${run}x${run}`, `${run}y${run}z${run}`)).toBe(`s3://b/wh${run}x/y${run}z`);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});
