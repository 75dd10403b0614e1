import { pathSegment } from '../src/http/rest-request';

describe('pathSegment', () => {
  it('finds a segment of the path, still encoded, without the query', () => {
    expect(pathSegment('/v1/table/shop%24items/describe?delimiter=%24', 3)).toBe('shop%24items');
    expect(pathSegment('/v1/table/shop%24items/describe?delimiter=%24', 4)).toBe('describe');
    expect(pathSegment('/v1/table/t', 3)).toBe('t');
    expect(pathSegment('/v1/table/t?', 3)).toBe('t');
  });

  it('keeps empty segments empty, as the path has them', () => {
    expect(pathSegment('/v1/table/', 3)).toBe('');
    expect(pathSegment('/v1//x', 2)).toBe('');
    expect(pathSegment('/v1//x', 3)).toBe('x');
  });

  it('has nothing past the end of the path, even when the query holds slashes', () => {
    expect(pathSegment('/v1/table', 3)).toBeUndefined();
    expect(pathSegment('/v1/table?next=/a/b', 3)).toBeUndefined();
    expect(pathSegment('', 1)).toBeUndefined();
  });
});
