import {
  ErrorCode,
  decideCreateTableVersion,
  decideDeleteTableVersions,
  finalManifestName,
  finalManifestPath,
  listTableVersions,
  requireVersion,
  versionOfManifestName,
} from '../src';
import { declared, expectCode, fold, given, ns, version } from './support';

const staging = (v: number) => `wh/default/a/t-u-a-t.lance/_versions/${v}.manifest-abc`;
const create = (v: number, namingScheme: 'V1' | 'V2' = 'V2') => ({
  id: ['a', 't'],
  version: v,
  stagingManifestPath: staging(v),
  namingScheme,
  timestampMillis: 5,
  manifestSize: 9,
});

describe('versions', () => {
  it('names manifests the way Lance does', () => {
    expect(finalManifestName(1, 'V2')).toBe('18446744073709551614.manifest');
    expect(finalManifestName(0, 'V2')).toBe('18446744073709551615.manifest');
    expect(finalManifestName(12, 'V1')).toBe('12.manifest');
    expect(versionOfManifestName('18446744073709551613.manifest')).toEqual({ version: 2, scheme: 'V2' });
    expect(versionOfManifestName('7.manifest')).toEqual({ version: 7, scheme: 'V1' });
    expect(versionOfManifestName('7.manifest-tmp')).toBeUndefined();
    expect(versionOfManifestName('x.manifest')).toBeUndefined();
  });

  it('finalises only staging manifests directly in the table’s _versions directory', () => {
    const location = '/wh/default/a/t.lance';
    expect(finalManifestPath(location, 'wh/default/a/t.lance/_versions/3.manifest-x', 3, 'V1')).toBe('wh/default/a/t.lance/_versions/3.manifest');
    expect(finalManifestPath(location, '/wh/default/a/t.lance/_versions/3.manifest-x', 3, 'V2')).toBe(
      'wh/default/a/t.lance/_versions/18446744073709551612.manifest',
    );
    for (const bad of ['wh/default/a/other.lance/_versions/3.m', 'wh/default/a/t.lance/_versions/../../x', 'wh/default/a/t.lance/_versions/sub/3.m', 'wh/default/a/t.lance/_versions/', 'etc/passwd']) {
      expectCode(() => finalManifestPath(location, bad, 3, 'V2'), ErrorCode.InvalidInput);
    }
  });

  it('creates a version once; a second create of it is a concurrent modification', () => {
    const state = given(ns('a'), declared(['a', 't']));
    const events = decideCreateTableVersion(state, create(1));
    expect(events[0]).toMatchObject({
      type: 'TableVersionCreated',
      data: { version: 1, manifestPath: 'wh/default/a/t-u-a-t.lance/_versions/18446744073709551614.manifest', manifestSize: 9 },
    });
    fold(state, events);
    expect(state.table(['a', 't'])!.latestVersion).toBe(1);
    expectCode(() => decideCreateTableVersion(state, create(1)), ErrorCode.ConcurrentModification);
    expectCode(() => decideCreateTableVersion(state, { ...create(2), id: ['a', 'zz'] }), ErrorCode.TableNotFound);
  });

  it('refuses version operations on an unmanaged table', () => {
    const state = given(ns('a'), declared(['a', 't'], 'u-a-t', false));
    expectCode(() => decideCreateTableVersion(state, create(1)), ErrorCode.InvalidTableState);
    expectCode(() => decideDeleteTableVersions(state, ['a', 't'], [{ startVersion: 0, endVersion: -1 }]), ErrorCode.InvalidTableState);
  });

  it('deletes version records by half-open ranges, -1 meaning through the latest', () => {
    const state = given(ns('a'), declared(['a', 't']), ...[1, 2, 3, 4, 5].map((v) => version(['a', 't'], v)));
    const some = decideDeleteTableVersions(state, ['a', 't'], [{ startVersion: 2, endVersion: 4 }, { startVersion: 5, endVersion: 6 }]);
    expect(some[0]).toMatchObject({ type: 'TableVersionsDeleted', data: { versions: [2, 3, 5] } });
    fold(state, some);
    expect(state.table(['a', 't'])!.latestVersion).toBe(4);
    expect(decideDeleteTableVersions(state, ['a', 't'], [{ startVersion: 10, endVersion: 20 }])).toEqual([]);
    fold(state, decideDeleteTableVersions(state, ['a', 't'], [{ startVersion: 0, endVersion: -1 }]));
    expect(state.table(['a', 't'])!.latestVersion).toBeUndefined();
    expectCode(() => decideDeleteTableVersions(state, ['a', 't'], [{ startVersion: -1, endVersion: 2 }]), ErrorCode.InvalidInput);
    expectCode(() => decideDeleteTableVersions(state, ['a', 't'], [{ startVersion: 0, endVersion: -2 }]), ErrorCode.InvalidInput);
  });

  it('lists versions in either order with exclusive page tokens', () => {
    const state = given(ns('a'), declared(['a', 't']), ...[3, 1, 2].map((v) => version(['a', 't'], v)));
    const ids = (p: { items: { version: number }[] }) => p.items.map((v) => v.version);
    expect(ids(listTableVersions(state, ['a', 't'], {}, false))).toEqual([1, 2, 3]);
    const first = listTableVersions(state, ['a', 't'], { limit: 1 }, true);
    expect([ids(first), first.pageToken]).toEqual([[3], '3']);
    expect(ids(listTableVersions(state, ['a', 't'], { pageToken: '3' }, true))).toEqual([2, 1]);
    expect(ids(listTableVersions(state, ['a', 't'], { pageToken: '1' }, false))).toEqual([2, 3]);
    expectCode(() => listTableVersions(state, ['a', 't'], { pageToken: 'x' }, false), ErrorCode.InvalidInput);
    expectCode(() => requireVersion(state.table(['a', 't'])!, 9), ErrorCode.TableVersionNotFound);
  });
});
