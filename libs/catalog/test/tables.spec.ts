import {
  ErrorCode,
  decideDeclareTable,
  decideDeregisterTable,
  decideDropTable,
  decideRecordTableDataChanged,
  decideRegisterTable,
  decideRenameTable,
  decideRequestTableBackfill,
  isOnlyDeclared,
  listAllTables,
  listTables,
} from '../src';
import { given } from './decider';
import { declared, fold, ns, stateOf, version } from './support';

const declare = (id: string[], location = `/wh/${id.join('/')}.lance`) => ({
  id,
  tableUuid: `uuid-${id.join('-')}`,
  location,
  properties: { p: '1' },
  managedVersioning: true,
});
/** Where `declared` places a table. */
const locationOf = (id: string[]) => `/wh/default/${id.join('/')}-u-${id.join('-')}.lance`;
const imported = [1, 2].map((v) => ({ version: v, manifestPath: `x/${v}`, namingScheme: 'V2' as const, timestampMillis: v }));

describe('DeclareTable', () => {
  it('declares a table in an existing namespace', () =>
    given(ns('a'))
      .when((view) => decideDeclareTable(view, declare(['a', 't'])))
      .thenMatch({ type: 'TableDeclared' }));

  it('holds the table, declared only, at its location', () =>
    given(ns('a'))
      .when((view) => decideDeclareTable(view, declare(['a', 't'])))
      .thenState((state) => {
        const t = state.table(['a', 't'])!;
        expect(t).toMatchObject({ location: '/wh/a/t.lance', managedVersioning: true, origin: 'declared' });
        expect(isOnlyDeclared(t)).toBe(true);
        expect(state.tableAtLocation('/wh/a/t.lance')).toBe(t);
      }));

  it.each([
    ['a missing namespace', [], declare(['a', 't']), ErrorCode.NamespaceNotFound],
    ['a table that exists', [ns('a'), declared(['a', 't'])], declare(['a', 't']), ErrorCode.TableAlreadyExists],
    ['the name of a namespace', [ns('a'), ns('a', 'sub')], declare(['a', 'sub']), ErrorCode.TableAlreadyExists],
    ["another table's location", [ns('a'), declared(['a', 't'])], declare(['a', 'u'], locationOf(['a', 't'])), ErrorCode.InvalidInput],
    ['an id without a table name', [ns('a')], declare([]), ErrorCode.InvalidInput],
  ])('refuses %s', (_what, history, cmd, code) =>
    given(...history)
      .when((view) => decideDeclareTable(view, cmd))
      .thenFails(code));

  it('declares again a name whose table was dropped', () =>
    given(ns('a'), declared(['a', 't']), { type: 'TableDropped', data: { table: ['a', 't'], tableUuid: 'u-a-t', location: locationOf(['a', 't']) } })
      .when((view) => decideDeclareTable(view, declare(['a', 't'])))
      .thenMatch({ type: 'TableDeclared' }));
});

describe('DropTable and DeregisterTable', () => {
  const two = [ns('a'), declared(['a', 't']), declared(['a', 'u'])];

  it('drops a table, freeing its name and its location', () =>
    given(...two)
      .when((view) => decideDropTable(view, ['a', 't']))
      .thenState((state) => {
        expect(state.childTables(['a']).toArray()).toEqual(['u']);
        expect(state.tableAtLocation(locationOf(['a', 't']))).toBeUndefined();
      }));

  it('deregisters a table, freeing its name', () =>
    given(...two)
      .when((view) => decideDeregisterTable(view, ['a', 'u']))
      .thenState((state) => expect(state.childTables(['a']).toArray()).toEqual(['t'])));

  it('refuses a table that is gone', () =>
    given(...two, { type: 'TableDropped', data: { table: ['a', 't'], tableUuid: 'u-a-t', location: locationOf(['a', 't']) } })
      .when((view) => decideDropTable(view, ['a', 't']))
      .thenFails(ErrorCode.TableNotFound));

  it('refuses a namespace that does not exist', () =>
    given(...two)
      .when((view) => decideDropTable(view, ['b', 't']))
      .thenFails(ErrorCode.NamespaceNotFound));
});

describe('RegisterTable', () => {
  it('refuses a name that is taken, in Create mode', () =>
    given(ns('a'), declared(['a', 't']))
      .when((view) => decideRegisterTable(view, { ...declare(['a', 't'], '/wh/r.lance'), mode: 'Create', versions: imported }))
      .thenFails(ErrorCode.TableAlreadyExists));

  it('replaces the table of that name in Overwrite mode', () =>
    given(ns('a'), declared(['a', 't']))
      .when((view) => decideRegisterTable(view, { ...declare(['a', 't'], '/wh/r.lance'), mode: 'Overwrite', versions: imported }))
      .thenMatch({ type: 'TableDeregistered' }, { type: 'TableRegistered' }));

  it('imports the versions found, and frees the location of the table it replaced', () =>
    given(ns('a'), declared(['a', 't']))
      .when((view) => decideRegisterTable(view, { ...declare(['a', 't'], '/wh/r.lance'), mode: 'Overwrite', versions: imported }))
      .thenState((state) => {
        expect(state.table(['a', 't'])).toMatchObject({ origin: 'registered', latestVersion: 2 });
        expect(state.tableAtLocation(locationOf(['a', 't']))).toBeUndefined();
      }));
});

describe('RenameTable', () => {
  const history = [ns('a'), ns('b'), declared(['a', 't']), version(['a', 't'], 1)];

  it('renames within a namespace, keeping the location', () =>
    given(...history)
      .when((view) => decideRenameTable(view, { id: ['a', 't'], newTableName: 'u' }))
      .thenState((state) => {
        expect(state.table(['a', 'u'])!.location).toBe(locationOf(['a', 't']));
        expect(state.table(['a', 't'])).toBeUndefined();
      }));

  it('moves a table to another namespace with its versions and location', () =>
    given(...history)
      .when((view) => decideRenameTable(view, { id: ['a', 't'], newTableName: 'v', newNamespace: ['b'] }))
      .thenState((state) => {
        expect(state.table(['b', 'v'])!.versions.size).toBe(1);
        expect(state.tableAtLocation(locationOf(['a', 't']))!.id).toEqual(['b', 'v']);
        expect(state.childTables(['a']).size).toBe(0);
      }));

  it.each([
    ['a name that is taken', { id: ['a', 't'], newTableName: 'w', newNamespace: ['b'] }, ErrorCode.TableAlreadyExists],
    ['a namespace that does not exist', { id: ['a', 't'], newTableName: 'x', newNamespace: ['c'] }, ErrorCode.NamespaceNotFound],
    ['a table that does not exist', { id: ['a', 'zz'], newTableName: 'x' }, ErrorCode.TableNotFound],
  ])('refuses %s', (_what, cmd, code) =>
    given(...history, declared(['b', 'w']))
      .when((view) => decideRenameTable(view, cmd))
      .thenFails(code));
});

describe('ListTables and ListAllTables', () => {
  it('lists the tables directly in a namespace, with or without declared-only ones', () => {
    const state = stateOf(ns('a'), declared(['a', 'b']), declared(['a', 'a']), version(['a', 'a'], 1), ns('a', 'sub'), declared(['a', 'sub', 'c']));
    expect(listTables(state, ['a'], {}, true)).toEqual({ items: ['a', 'b'], pageToken: null });
    expect(listTables(state, ['a'], {}, false)).toEqual({ items: ['a'], pageToken: null });
    expect(listTables(state, ['a'], { limit: 1 }, true)).toEqual({ items: ['a'], pageToken: 'a' });
  });

  it('lists every table recursively by full id, in order, with the delimiter asked for', () => {
    const state = stateOf(ns('a'), declared(['a', 'b']), declared(['z']), ns('a', 'sub'), declared(['a', 'sub', 'c']), version(['z'], 1));
    expect(listAllTables(state, {}, true, '$').items).toEqual(['a$b', 'a$sub$c', 'z']);
    expect(listAllTables(state, {}, false, '.').items).toEqual(['z']);
    expect(listAllTables(state, { pageToken: 'a$b', limit: 1 }, true, '$')).toEqual({ items: ['a$sub$c'], pageToken: 'a$sub$c' });
  });

  it('never counts an unmanaged table as declared only', () => expect(isOnlyDeclared(stateOf(ns('a'), declared(['a', 'u'], 'uu', false)).table(['a', 'u'])!)).toBe(false));
});

describe("a data change's record (TableDataChanged)", () => {
  const limits = { maxCount: 3, maxBytes: 1000 };

  it('stores the properties it carries on the table, over those it had', () =>
    given(ns('a'), declared(['a', 't']), version(['a', 't'], 1))
      .when((view) => decideRecordTableDataChanged(view, { id: ['a', 't'], operation: 'Update', version: 2, properties: { owner: 'ana' }, propertyLimits: limits }))
      .thenState((state) => expect(state.table(['a', 't'])!.properties).toEqual({ owner: 'ana' })));

  it('records none when it carries none, and leaves the properties as they were', () =>
    given(ns('a'), declared(['a', 't']))
      .when((view) => decideRecordTableDataChanged(view, { id: ['a', 't'], operation: 'Update', version: 2, properties: {} }))
      .then({ type: 'TableDataChanged', data: { table: ['a', 't'], tableUuid: 'u-a-t', operation: 'Update', version: 2 } }));

  it('refuses properties that would take the table past its limits', () =>
    given(ns('a'), declared(['a', 't']))
      .when((view) => decideRecordTableDataChanged(view, { id: ['a', 't'], operation: 'Update', version: 2, properties: { a: '1', b: '2', c: '3', d: '4' }, propertyLimits: limits }))
      .thenFails(ErrorCode.InvalidInput, /properties/));
});

describe('the options of a queued job (backfill, view refresh)', () => {
  it("are its transaction's properties", () => {
    const state = stateOf(ns('a'), declared(['a', 't']));
    const events = decideRequestTableBackfill(state, { id: ['a', 't'], column: 'c', computed: true, options: { cluster: 'gpu', concurrency: '4' } });
    fold(state, events, { transactionId: 'job', operation: 'AlterTableBackfillColumns', occurredAt: '2026-01-01T00:00:00.000Z' });
    expect(state.transaction('job')).toMatchObject({ status: 'Queued', properties: { cluster: 'gpu', concurrency: '4', column: 'c' } });
  });
});
