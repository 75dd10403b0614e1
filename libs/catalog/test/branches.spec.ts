import {
  CatalogState,
  DraftCatalog,
  ErrorCode,
  decideCreateTableBranch,
  decideCreateTableVersion,
  decideDeleteTableBranch,
  decideDeleteTableVersions,
  evolve,
  requireLine,
} from '../src';
import { declared, expectCode, fold, given, meta, ns, version } from './support';

const id = ['a', 't'];
const location = '/wh/default/a/t-u-a-t.lance';
const staging = (branch: string, v: number) => `wh/default/a/t-u-a-t.lance/tree/${branch}/_versions/${v}.manifest-tmp`;

function withBranch() {
  const state = given(ns('a'), declared(id), version(id, 1), version(id, 2));
  fold(state, decideCreateTableBranch(state, { id, name: 'dev', createdAtMillis: 7 }));
  return state;
}

describe('branches', () => {
  it('records a branch from main\'s latest version, and its versions apart from main\'s', () => {
    const state = withBranch();
    expect(state.table(id)!.branches!.get('dev')).toMatchObject({ parentVersion: 2, createdAtMillis: 7, recordedBy: 'CreateTableBranch' });
    const events = decideCreateTableVersion(state, { id, branch: 'dev', version: 2, stagingManifestPath: staging('dev', 2), namingScheme: 'V2', timestampMillis: 8 });
    expect(events.map((e) => e.type)).toEqual(['TableVersionCreated']);
    fold(state, events);
    fold(state, decideCreateTableVersion(state, { id, branch: 'dev', version: 3, stagingManifestPath: staging('dev', 3), namingScheme: 'V2', timestampMillis: 9 }));
    const dev = requireLine(state.table(id)!, 'dev');
    expect(dev.versions.keys()).toEqual([2, 3]);
    expect(dev.latestVersion).toBe(3);
    expect(dev.versions.get(3)!.manifestPath).toBe('wh/default/a/t-u-a-t.lance/tree/dev/_versions/18446744073709551612.manifest');
    expect(state.table(id)!.latestVersion).toBe(2);
    expect(state.table(id)!.versions.keys()).toEqual([1, 2]);
    // Version 3 is taken on dev, not on main.
    expectCode(() => decideCreateTableVersion(state, { id, branch: 'dev', version: 3, stagingManifestPath: staging('dev', 3), namingScheme: 'V2', timestampMillis: 9 }), ErrorCode.ConcurrentModification, /branch 'dev'/);
    // A staging manifest outside the branch's own _versions is refused.
    expectCode(() => decideCreateTableVersion(state, { id, branch: 'dev', version: 4, stagingManifestPath: 'wh/default/a/t-u-a-t.lance/_versions/x', namingScheme: 'V2', timestampMillis: 9 }), ErrorCode.InvalidInput);
    fold(state, decideDeleteTableVersions(state, id, [{ startVersion: 3, endVersion: -1 }], 'dev'));
    expect(requireLine(state.table(id)!, 'dev').latestVersion).toBe(2);
    expect(state.table(id)!.versions.keys()).toEqual([1, 2]);
  });

  it('records a branch a client made itself at its first commit', () => {
    const state = given(ns('a'), declared(id), version(id, 1));
    const events = decideCreateTableVersion(state, { id, branch: 'own', version: 1, stagingManifestPath: staging('own', 1), namingScheme: 'V2', timestampMillis: 5 });
    expect(events.map((e) => e.type)).toEqual(['TableBranchCreated', 'TableVersionCreated']);
    fold(state, events);
    expect(state.table(id)!.branches!.get('own')).toMatchObject({ parentVersion: 1, recordedBy: 'commit', latestVersion: 1 });
    expectCode(() => decideCreateTableVersion(state, { id, branch: '../x', version: 1, stagingManifestPath: staging('x', 1), namingScheme: 'V2', timestampMillis: 5 }), ErrorCode.InvalidInput);
  });

  it('refuses what a branch cannot be, with the spec\'s codes', () => {
    const state = withBranch();
    expectCode(() => decideCreateTableBranch(state, { id, name: 'dev', createdAtMillis: 1 }), ErrorCode.TableBranchAlreadyExists);
    expectCode(() => decideCreateTableBranch(state, { id, name: 'x', fromBranch: 'nope', createdAtMillis: 1 }), ErrorCode.TableBranchNotFound);
    expectCode(() => decideCreateTableBranch(state, { id, name: 'x', fromVersion: 9, createdAtMillis: 1 }), ErrorCode.TableVersionNotFound);
    expectCode(() => decideCreateTableBranch(state, { id, name: 'main', createdAtMillis: 1 }), ErrorCode.InvalidInput);
    expectCode(() => decideCreateTableBranch(state, { id, name: 'a/b', createdAtMillis: 1 }), ErrorCode.InvalidInput);
    expectCode(() => decideDeleteTableBranch(state, id, 'nope'), ErrorCode.TableBranchNotFound);
    expectCode(() => requireLine(state.table(id)!, 'nope'), ErrorCode.TableBranchNotFound);
    // dev has no version yet (its first commit has not come): nothing to branch from.
    expectCode(() => decideCreateTableBranch(state, { id, name: 'x', fromBranch: 'dev', createdAtMillis: 1 }), ErrorCode.InvalidTableState);
    const unmanaged = given(ns('a'), declared(['a', 'u'], 'u-a-u', false), version(['a', 'u'], 1, 'u-a-u'));
    expectCode(() => requireLine(unmanaged.table(['a', 'u'])!, 'dev'), ErrorCode.Unsupported);
  });

  it('keeps a parent while a branch made from it lives, and forgets a deleted branch', () => {
    const state = withBranch();
    fold(state, decideCreateTableVersion(state, { id, branch: 'dev', version: 2, stagingManifestPath: staging('dev', 2), namingScheme: 'V2', timestampMillis: 8 }));
    fold(state, decideCreateTableBranch(state, { id, name: 'child', fromBranch: 'dev', createdAtMillis: 9 }));
    expect(state.table(id)!.branches!.get('child')).toMatchObject({ parentBranch: 'dev', parentVersion: 2 });
    expectCode(() => decideDeleteTableBranch(state, id, 'dev'), ErrorCode.InvalidTableState, /child/);
    fold(state, decideDeleteTableBranch(state, id, 'child'));
    fold(state, decideDeleteTableBranch(state, id, 'dev'));
    expect(state.table(id)!.branches).toBeUndefined();
  });

  it('lets a draft change a branch without touching the state under it', () => {
    const state = withBranch();
    const draft = new DraftCatalog(state);
    const events = decideCreateTableVersion(draft, { id, branch: 'dev', version: 2, stagingManifestPath: staging('dev', 2), namingScheme: 'V2', timestampMillis: 8 });
    for (const event of events) evolve(draft, { event, metadata: meta(), revision: 0 });
    expect(requireLine(draft.table(id)!, 'dev').versions.keys()).toEqual([2]);
    expect(requireLine(state.table(id)!, 'dev').versions.keys()).toEqual([]);
  });

  it('keeps branches and their versions through a snapshot image', () => {
    const state = withBranch();
    fold(state, decideCreateTableVersion(state, { id, branch: 'dev', version: 2, stagingManifestPath: staging('dev', 2), namingScheme: 'V2', timestampMillis: 8 }));
    const restored = CatalogState.fromImage(state.toImage());
    const dev = requireLine(restored.table(id)!, 'dev');
    expect(dev.versions.values()).toEqual(requireLine(state.table(id)!, 'dev').versions.values());
    expect(restored.table(id)!.branches!.get('dev')).toMatchObject({ parentVersion: 2, createdAtMillis: 7, latestVersion: 2 });
    expect(restored.table(id)!.location).toBe(location);
  });
});
