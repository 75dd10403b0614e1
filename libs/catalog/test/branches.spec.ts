import {
  CatalogState,
  CreateTableBranch,
  CreateTableVersion,
  DraftCatalog,
  ErrorCode,
  decideCreateTableBranch,
  decideCreateTableVersion,
  decideDeleteTableBranch,
  decideDeleteTableVersions,
  evolve,
  requireLine,
} from '../src';
import { given } from './decider';
import { branched, declared, expectCode, fold, meta, ns, stateOf, version } from './support';

const id = ['a', 't'];
const location = '/wh/default/a/t-u-a-t.lance';
const staging = (branch: string, v: number) => `wh/default/a/t-u-a-t.lance/tree/${branch}/_versions/${v}.manifest-tmp`;
const commit = (branch: string, v: number): CreateTableVersion => ({ id, branch, version: v, stagingManifestPath: staging(branch, v), namingScheme: 'V2', timestampMillis: 8 });
const branch = (cmd: Omit<CreateTableBranch, 'id' | 'createdAtMillis'>): CreateTableBranch => ({ id, createdAtMillis: 7, ...cmd });

/** A managed table with versions 1 and 2 on main. */
const table = [ns('a'), declared(id), version(id, 1), version(id, 2)];
/** ...and a branch `dev` made from version 2. */
const withDev = [...table, branched(id, 'dev', 2)];
const devVersion = (v: number) => version(id, v, undefined, 'dev');

describe('CreateTableBranch', () => {
  it("starts a branch from main's latest version", () =>
    given(...table)
      .when((view) => decideCreateTableBranch(view, branch({ name: 'dev' })))
      .thenState((state) => expect(state.table(id)!.branches!.get('dev')).toMatchObject({ parentVersion: 2, createdAtMillis: 7, recordedBy: 'CreateTableBranch' })));

  it('starts a branch from another branch, which then records its parent', () =>
    given(...withDev, devVersion(2))
      .when((view) => decideCreateTableBranch(view, branch({ name: 'child', fromBranch: 'dev' })))
      .thenState((state) => expect(state.table(id)!.branches!.get('child')).toMatchObject({ parentBranch: 'dev', parentVersion: 2 })));

  it.each([
    ['a name the table already has', branch({ name: 'dev' }), ErrorCode.TableBranchAlreadyExists],
    ['a parent branch that does not exist', branch({ name: 'x', fromBranch: 'nope' }), ErrorCode.TableBranchNotFound],
    ['a version the parent does not have', branch({ name: 'x', fromVersion: 9 }), ErrorCode.TableVersionNotFound],
    ["the name 'main'", branch({ name: 'main' }), ErrorCode.InvalidInput],
    ['a name that is no single folder', branch({ name: 'a/b' }), ErrorCode.InvalidInput],
    // dev has no version yet (its first commit has not come): nothing to branch from.
    ['a parent without a version yet', branch({ name: 'x', fromBranch: 'dev' }), ErrorCode.InvalidTableState],
  ])('refuses %s', (_what, cmd, code) =>
    given(...withDev)
      .when((view) => decideCreateTableBranch(view, cmd))
      .thenFails(code));
});

describe('CreateTableVersion on a branch', () => {
  it('commits a version of the branch alone', () =>
    given(...withDev)
      .when((view) => decideCreateTableVersion(view, commit('dev', 2)))
      .thenMatch({ type: 'TableVersionCreated', data: { branch: 'dev', version: 2 } }));

  it("names the manifest under the branch's own tree", () =>
    given(...withDev, devVersion(2))
      .when((view) => decideCreateTableVersion(view, commit('dev', 3)))
      .thenMatch({ type: 'TableVersionCreated', data: { manifestPath: 'wh/default/a/t-u-a-t.lance/tree/dev/_versions/18446744073709551612.manifest' } }));

  it("keeps the branch's versions apart from main's", () =>
    given(...withDev, devVersion(2))
      .when((view) => decideCreateTableVersion(view, commit('dev', 3)))
      .thenState((state) => {
        const dev = requireLine(state.table(id)!, 'dev');
        expect([dev.versions.keys(), dev.latestVersion]).toEqual([[2, 3], 3]);
        expect([state.table(id)!.versions.keys(), state.table(id)!.latestVersion]).toEqual([[1, 2], 2]);
      }));

  it('refuses a version the branch already has, naming the branch', () =>
    given(...withDev, devVersion(2), devVersion(3))
      .when((view) => decideCreateTableVersion(view, commit('dev', 3)))
      .thenFails(ErrorCode.ConcurrentModification, /branch 'dev'/));

  it("refuses a staging manifest outside the branch's own _versions", () =>
    given(...withDev)
      .when((view) => decideCreateTableVersion(view, { ...commit('dev', 4), stagingManifestPath: 'wh/default/a/t-u-a-t.lance/_versions/x' }))
      .thenFails(ErrorCode.InvalidInput));

  it('records a branch a client made itself at its first commit', () =>
    given(ns('a'), declared(id), version(id, 1))
      .when((view) => decideCreateTableVersion(view, { ...commit('own', 1), timestampMillis: 5 }))
      .thenMatch({ type: 'TableBranchCreated', data: { branch: 'own', parentVersion: 1, createdAtMillis: 5, recordedBy: 'commit' } }, { type: 'TableVersionCreated', data: { branch: 'own' } }));

  it("makes that first commit the client's branch's latest version", () =>
    given(ns('a'), declared(id), version(id, 1))
      .when((view) => decideCreateTableVersion(view, commit('own', 1)))
      .thenState((state) => expect(state.table(id)!.branches!.get('own')).toMatchObject({ parentVersion: 1, recordedBy: 'commit', latestVersion: 1 })));

  it("refuses a client's branch whose name is not valid", () =>
    given(ns('a'), declared(id), version(id, 1))
      .when((view) => decideCreateTableVersion(view, commit('../x', 1)))
      .thenFails(ErrorCode.InvalidInput));
});

describe('BatchDeleteTableVersions on a branch', () => {
  it("deletes the branch's versions and leaves main's", () =>
    given(...withDev, devVersion(2), devVersion(3))
      .when((view) => decideDeleteTableVersions(view, id, [{ startVersion: 3, endVersion: -1 }], 'dev'))
      .thenState((state) => {
        expect(requireLine(state.table(id)!, 'dev').latestVersion).toBe(2);
        expect(state.table(id)!.versions.keys()).toEqual([1, 2]);
      }));

  it('refuses to delete the version a branch was made from, on its parent line', () => {
    given(...withDev, devVersion(3), devVersion(4), branched(id, 'child', 3, 'dev'))
      .when((view) => decideDeleteTableVersions(view, id, [{ startVersion: 0, endVersion: 4 }], 'dev'))
      .thenFails(ErrorCode.InvalidTableState);
    given(...withDev)
      .when((view) => decideDeleteTableVersions(view, id, [{ startVersion: 2, endVersion: 3 }]))
      .thenFails(ErrorCode.InvalidTableState);
    given(...withDev)
      .when((view) => decideDeleteTableVersions(view, id, [{ startVersion: 1, endVersion: 2 }]))
      .thenMatch({ type: 'TableVersionsDeleted', data: { versions: [1] } });
    // A branch first seen in a client's commit names no parent the catalog knows: nothing is kept for it.
    const firstCommit = decideCreateTableVersion(stateOf(...table), commit('own', 1));
    expect(stateOf(...table, ...firstCommit).table(id)!.branches!.get('own')).toMatchObject({ recordedBy: 'commit', parentVersion: 1 });
    given(...table, ...firstCommit)
      .when((view) => decideDeleteTableVersions(view, id, [{ startVersion: 1, endVersion: 2 }]))
      .thenMatch({ type: 'TableVersionsDeleted', data: { versions: [1] } });
  });
});

describe('DeleteTableBranch', () => {
  const withChild = [...withDev, devVersion(2), branched(id, 'child', 2, 'dev')];

  it('refuses to delete a branch others were made from, naming them', () =>
    given(...withChild)
      .when((view) => decideDeleteTableBranch(view, id, 'dev'))
      .thenFails(ErrorCode.InvalidTableState, /child/));

  it('deletes a branch nothing was made from', () =>
    given(...withChild)
      .when((view) => decideDeleteTableBranch(view, id, 'child'))
      .then({ type: 'TableBranchDeleted', data: { table: id, tableUuid: 'u-a-t', branch: 'child' } }));

  it('forgets the branches once the last is deleted', () =>
    given(...withChild, { type: 'TableBranchDeleted', data: { table: id, tableUuid: 'u-a-t', branch: 'child' } })
      .when((view) => decideDeleteTableBranch(view, id, 'dev'))
      .thenState((state) => expect(state.table(id)!.branches).toBeUndefined()));

  it('refuses a branch that does not exist', () =>
    given(...withDev)
      .when((view) => decideDeleteTableBranch(view, id, 'nope'))
      .thenFails(ErrorCode.TableBranchNotFound));
});

describe('a table on one of its lines', () => {
  it('is refused on a branch it does not have', () => expectCode(() => requireLine(stateOf(...withDev).table(id)!, 'nope'), ErrorCode.TableBranchNotFound));

  it('is refused on any branch when the catalog does not manage its versions', () => {
    const unmanaged = stateOf(ns('a'), declared(['a', 'u'], 'u-a-u', false), version(['a', 'u'], 1, 'u-a-u'));
    expectCode(() => requireLine(unmanaged.table(['a', 'u'])!, 'dev'), ErrorCode.Unsupported);
  });

  it('changes in a draft without touching the state under it', () => {
    const state = stateOf(...withDev);
    const draft = new DraftCatalog(state);
    for (const event of decideCreateTableVersion(draft, commit('dev', 2))) evolve(draft, { event, metadata: meta(), revision: 0 });
    expect(requireLine(draft.table(id)!, 'dev').versions.keys()).toEqual([2]);
    expect(requireLine(state.table(id)!, 'dev').versions.keys()).toEqual([]);
  });

  it('keeps its branches and their versions through a snapshot image', () => {
    const state = stateOf(...withDev);
    fold(state, decideCreateTableVersion(state, commit('dev', 2)));
    const restored = CatalogState.fromImage(state.toImage());
    expect(requireLine(restored.table(id)!, 'dev').versions.values()).toEqual(requireLine(state.table(id)!, 'dev').versions.values());
    expect(restored.table(id)!.branches!.get('dev')).toMatchObject({ parentVersion: 2, createdAtMillis: 7, latestVersion: 2 });
    expect(restored.table(id)!.location).toBe(location);
  });
});
