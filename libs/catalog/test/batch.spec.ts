import { BatchOperation, ErrorCode, decideBatch } from '../src';
import { declared, expectCode, fold, stateOf, meta, ns, version } from './support';

const stagingOf = (table: string, v: number) => `wh/default/a/${table}-u-a-${table}.lance/_versions/${v}.manifest-s`;
const createVersion = (table: string, v: number): BatchOperation => ({
  kind: 'create_table_version',
  command: { id: ['a', table], version: v, stagingManifestPath: stagingOf(table, v), namingScheme: 'V2', timestampMillis: 1 },
});

describe('batch decisions', () => {
  it('decides each operation against the effects of the ones before it', () => {
    const state = stateOf(ns('a'), declared(['a', 't']));
    const operations: BatchOperation[] = [
      {
        kind: 'declare_table',
        command: { id: ['a', 'new'], tableUuid: 'u-a-new', location: '/wh/default/a/new-u-a-new.lance', properties: {}, managedVersioning: true },
      },
      createVersion('new', 1),
      createVersion('t', 1),
      createVersion('t', 2),
      { kind: 'delete_table_versions', id: ['a', 't'], ranges: [{ startVersion: 1, endVersion: 2 }] },
    ];
    const decision = decideBatch(state, operations, meta());
    expect(decision.perOperation.map((events) => events.map((e) => e.type))).toEqual([
      ['TableDeclared'],
      ['TableVersionCreated'],
      ['TableVersionCreated'],
      ['TableVersionCreated'],
      ['TableVersionsDeleted'],
    ]);
    expect(state.table(['a', 'new'])).toBeUndefined();
    expect(state.table(['a', 't'])!.versions.size).toBe(0);
    fold(state, decision.events);
    expect([...state.table(['a', 't'])!.versions.keys()]).toEqual([2]);
    expect(state.table(['a', 'new'])!.latestVersion).toBe(1);
  });

  it('refuses the whole batch at the first failing operation, naming it, and leaves the state alone', () => {
    const state = stateOf(ns('a'), declared(['a', 't']), version(['a', 't'], 1));
    expectCode(
      () => decideBatch(state, [createVersion('t', 2), createVersion('t', 1)], meta()),
      ErrorCode.ConcurrentModification,
      /operation 2 \(create_table_version\)/,
    );
    expectCode(() => decideBatch(state, [createVersion('t', 2), createVersion('t', 2)], meta()), ErrorCode.ConcurrentModification);
    expectCode(
      () => decideBatch(state, [{ kind: 'deregister_table', id: ['a', 't'] }, createVersion('t', 2)], meta()),
      ErrorCode.TableNotFound,
    );
    expect([...state.table(['a', 't'])!.versions.keys()]).toEqual([1]);
  });

  it('does not let a draft change leak into the base state', () => {
    const state = stateOf(ns('a'), declared(['a', 't']), version(['a', 't'], 1));
    const before = state.table(['a', 't'])!;
    decideBatch(state, [createVersion('t', 2), { kind: 'deregister_table', id: ['a', 't'] }], meta());
    expect(state.table(['a', 't'])).toBe(before);
    expect([...before.versions.keys()]).toEqual([1]);
  });
});
