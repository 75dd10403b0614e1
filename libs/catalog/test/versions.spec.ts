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
import { given } from './decider';
import { declared, expectCode, ns, stateOf, version } from './support';

const id = ['a', 't'];
const staging = (v: number) => `wh/default/a/t-u-a-t.lance/_versions/${v}.manifest-abc`;
const create = (v: number, namingScheme: 'V1' | 'V2' = 'V2') => ({ id, version: v, stagingManifestPath: staging(v), namingScheme, timestampMillis: 5, manifestSize: 9 });
const table = [ns('a'), declared(id)];
const withVersions = (...versions: number[]) => [...table, ...versions.map((v) => version(id, v))];
const range = (startVersion: number, endVersion: number) => ({ startVersion, endVersion });

describe('manifest names', () => {
  it('names manifests the way Lance does', () => {
    expect(finalManifestName(1, 'V2')).toBe('18446744073709551614.manifest');
    expect(finalManifestName(0, 'V2')).toBe('18446744073709551615.manifest');
    expect(finalManifestName(12, 'V1')).toBe('12.manifest');
  });

  it('reads a committed manifest\'s version back from its name, and nothing from other files', () => {
    expect(versionOfManifestName('18446744073709551613.manifest')).toEqual({ version: 2, scheme: 'V2' });
    expect(versionOfManifestName('7.manifest')).toEqual({ version: 7, scheme: 'V1' });
    expect(versionOfManifestName('7.manifest-tmp')).toBeUndefined();
    expect(versionOfManifestName('x.manifest')).toBeUndefined();
  });

  it("finalises a staging manifest that sits directly in the table's _versions directory", () => {
    const location = '/wh/default/a/t.lance';
    expect(finalManifestPath(location, 'wh/default/a/t.lance/_versions/3.manifest-x', 3, 'V1')).toBe('wh/default/a/t.lance/_versions/3.manifest');
    expect(finalManifestPath(location, '/wh/default/a/t.lance/_versions/3.manifest-x', 3, 'V2')).toBe('wh/default/a/t.lance/_versions/18446744073709551612.manifest');
  });

  it.each(['wh/default/a/other.lance/_versions/3.m', 'wh/default/a/t.lance/_versions/../../x', 'wh/default/a/t.lance/_versions/sub/3.m', 'wh/default/a/t.lance/_versions/', 'etc/passwd'])(
    'refuses to finalise %s',
    (bad) => expectCode(() => finalManifestPath('/wh/default/a/t.lance', bad, 3, 'V2'), ErrorCode.InvalidInput),
  );

  it.each([
    ['a file Lance keeps beside the manifests', 'latest_version_hint.json'],
    ["another version's final manifest (V2)", '18446744073709551613.manifest'],
    ["another version's final manifest (V1)", '2.manifest'],
    ["this version's final name itself", '18446744073709551612.manifest'],
    ["another version's staging manifest", '18446744073709551613.manifest-4f1c'],
    ['a V1 staging name of another version that begins the same', '30.manifest-4f1c'],
    ['a staging name with nothing after its dash', '3.manifest-'],
  ])('refuses as version 3 %s', (_what, name) => expectCode(() => finalManifestPath('/wh/default/a/t.lance', `wh/default/a/t.lance/_versions/${name}`, 3, 'V2'), ErrorCode.InvalidInput));

  it("takes a staging manifest named in either scheme for the version's own final name", () => {
    const location = '/wh/default/a/t.lance';
    expect(finalManifestPath(location, 'wh/default/a/t.lance/_versions/18446744073709551612.manifest-9b2e', 3, 'V1')).toBe('wh/default/a/t.lance/_versions/3.manifest');
    expect(finalManifestPath(location, 'wh/default/a/t.lance/_versions/3.manifest-9b2e', 3, 'V2')).toBe('wh/default/a/t.lance/_versions/18446744073709551612.manifest');
  });
});

describe('CreateTableVersion', () => {
  it('records the version under its final manifest name', () =>
    given(...table)
      .when((view) => decideCreateTableVersion(view, create(1)))
      .thenMatch({ type: 'TableVersionCreated', data: { version: 1, manifestPath: 'wh/default/a/t-u-a-t.lance/_versions/18446744073709551614.manifest', manifestSize: 9 } }));

  it("makes it the table's latest version", () =>
    given(...table)
      .when((view) => decideCreateTableVersion(view, create(1)))
      .thenState((state) => expect(state.table(id)!.latestVersion).toBe(1)));

  it('refuses a version that exists: another writer committed it first', () =>
    given(...withVersions(1))
      .when((view) => decideCreateTableVersion(view, create(1)))
      .thenFails(ErrorCode.ConcurrentModification));

  it('refuses a table that does not exist', () =>
    given(...table)
      .when((view) => decideCreateTableVersion(view, { ...create(2), id: ['a', 'zz'] }))
      .thenFails(ErrorCode.TableNotFound));

  it('refuses a table whose versions the catalog does not manage', () =>
    given(ns('a'), declared(id, 'u-a-t', false))
      .when((view) => decideCreateTableVersion(view, create(1)))
      .thenFails(ErrorCode.InvalidTableState));
});

describe('BatchDeleteTableVersions', () => {
  it('deletes the versions in half-open ranges', () =>
    given(...withVersions(1, 2, 3, 4, 5))
      .when((view) => decideDeleteTableVersions(view, id, [range(2, 4), range(5, 6)]))
      .thenMatch({ type: 'TableVersionsDeleted', data: { versions: [2, 3, 5] } }));

  it('moves the latest version back to the newest left', () =>
    given(...withVersions(1, 2, 3, 4, 5))
      .when((view) => decideDeleteTableVersions(view, id, [range(2, 4), range(5, 6)]))
      .thenState((state) => expect(state.table(id)!.latestVersion).toBe(4)));

  it('records nothing when no version is in range', () =>
    given(...withVersions(1, 4))
      .when((view) => decideDeleteTableVersions(view, id, [range(10, 20)]))
      .then());

  it('deletes through the latest version with end -1, leaving none', () =>
    given(...withVersions(1, 4))
      .when((view) => decideDeleteTableVersions(view, id, [range(0, -1)]))
      .thenState((state) => expect(state.table(id)!.latestVersion).toBeUndefined()));

  it.each([
    ['a negative start', range(-1, 2)],
    ['an end below -1', range(0, -2)],
  ])('refuses %s', (_what, r) =>
    given(...withVersions(1))
      .when((view) => decideDeleteTableVersions(view, id, [r]))
      .thenFails(ErrorCode.InvalidInput));

  it('refuses a table whose versions the catalog does not manage', () =>
    given(ns('a'), declared(id, 'u-a-t', false))
      .when((view) => decideDeleteTableVersions(view, id, [range(0, -1)]))
      .thenFails(ErrorCode.InvalidTableState));

  it('refuses to delete a version a tag points at, and deletes around it', () => {
    given(...withVersions(1, 2, 3))
      .when((view) => decideDeleteTableVersions(view, id, [range(0, -1)], undefined, new Map([[2, 'release']])))
      .thenFails(ErrorCode.InvalidTableState);
    given(...withVersions(1, 2, 3))
      .when((view) => decideDeleteTableVersions(view, id, [range(1, 2), range(3, 4)], undefined, new Map([[2, 'release']])))
      .thenMatch({ type: 'TableVersionsDeleted', data: { versions: [1, 3] } });
  });
});

describe('ListTableVersions', () => {
  const state = stateOf(...table, ...[3, 1, 2].map((v) => version(id, v)));
  const versions = (p: { items: { version: number }[] }) => p.items.map((v) => v.version);

  it('lists versions oldest first', () => expect(versions(listTableVersions(state, id, {}, false))).toEqual([1, 2, 3]));

  it('lists them newest first, paged with exclusive tokens', () => {
    const first = listTableVersions(state, id, { limit: 1 }, true);
    expect([versions(first), first.pageToken]).toEqual([[3], '3']);
    expect(versions(listTableVersions(state, id, { pageToken: '3' }, true))).toEqual([2, 1]);
  });

  it('starts oldest first after the token', () => expect(versions(listTableVersions(state, id, { pageToken: '1' }, false))).toEqual([2, 3]));

  it('pages through versions with gaps in both orders, at every page size, from tokens of versions gone since', () => {
    const kept = [1, 2, 4, 5, 9, 10, 11, 15];
    const gapped = stateOf(...table, ...kept.map((v) => version(id, v)));
    for (const descending of [false, true]) {
      const order = descending ? [...kept].reverse() : kept;
      for (let limit = 1; limit <= kept.length + 1; limit++) {
        const seen: number[] = [];
        let token: string | undefined;
        for (let pages = 0; pages <= kept.length; pages++) {
          const page = listTableVersions(gapped, id, { limit, pageToken: token }, descending);
          seen.push(...versions(page));
          expect(page.items.map((r) => r.manifestPath)).toEqual(versions(page).map((v) => `wh/x/_versions/${v}.manifest`));
          if (page.pageToken === null) break;
          token = page.pageToken;
        }
        expect({ descending, limit, seen }).toEqual({ descending, limit, seen: order });
      }
      // A token naming a version no longer there (3, 12) starts past it all the same.
      expect(versions(listTableVersions(gapped, id, { pageToken: '3' }, descending))).toEqual(order.filter((v) => (descending ? v < 3 : v > 3)));
      expect(versions(listTableVersions(gapped, id, { pageToken: '12', limit: 2 }, descending))).toEqual(order.filter((v) => (descending ? v < 12 : v > 12)).slice(0, 2));
      expect(versions(listTableVersions(gapped, id, { pageToken: '99' }, descending))).toEqual(descending ? kept.slice().reverse() : []);
    }
  });

  it('refuses a token that is no version', () => expectCode(() => listTableVersions(state, id, { pageToken: 'x' }, false), ErrorCode.InvalidInput));

  it('refuses a version the table does not have', () => expectCode(() => requireVersion(state.table(id)!, 9), ErrorCode.TableVersionNotFound));
});
