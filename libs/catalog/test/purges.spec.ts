import {
  CatalogEvent,
  CatalogState,
  DraftCatalog,
  ErrorCode,
  decideDeclareTable,
  decideDropNamespace,
  decideDropTable,
  decideRecordTablePurged,
  decideRegisterTable,
  evolve,
} from '../src';
import { given } from './decider';
import { declared, meta, ns, stateOf } from './support';

const location = '/wh/default/a/t-u-a-t.lance';
const table = [ns('a'), declared(['a', 't'])];
/** The table dropped, its files to be purged once 1000 ms have passed. */
const dropped: CatalogEvent[] = [
  ...table,
  { type: 'TableDropped', data: { table: ['a', 't'], tableUuid: 'u-a-t', location } },
  { type: 'TablePurgeScheduled', data: { table: ['a', 't'], tableUuid: 'u-a-t', location, purgeAfterMillis: 1000 } },
];
const purged: CatalogEvent = { type: 'TablePurged', data: { table: ['a', 't'], tableUuid: 'u-a-t', location, files: 12 } };
const elsewhere = { id: ['a', 'other'], tableUuid: 'x', location, properties: {}, managedVersioning: true };

describe('DropTable with a purge', () => {
  it('schedules the purge with the drop', () =>
    given(...table)
      .when((view) => decideDropTable(view, ['a', 't'], { purgeAfterMillis: 1000 }))
      .thenMatch({ type: 'TableDropped' }, { type: 'TablePurgeScheduled' }));

  it('keeps the purge pending, at the table\'s location, once the table is gone', () =>
    given(...table)
      .when((view) => decideDropTable(view, ['a', 't'], { purgeAfterMillis: 1000 }))
      .thenState((state) => {
        expect(state.table(['a', 't'])).toBeUndefined();
        expect(state.pendingPurge('u-a-t')).toEqual({ table: ['a', 't'], tableUuid: 'u-a-t', location, purgeAfterMillis: 1000 });
        expect(state.purgeAtLocation(location)?.tableUuid).toBe('u-a-t');
      }));

  it('keeps the files of a drop that schedules no purge', () =>
    given(...table)
      .when((view) => decideDropTable(view, ['a', 't']))
      .thenMatch({ type: 'TableDropped' }));

  it('schedules a purge for every table a cascading namespace drop drops', () =>
    given(ns('a'), ns('a', 'b'), declared(['a', 't']), declared(['a', 'b', 'u']))
      .when((view) => decideDropNamespace(view, { id: ['a'], mode: 'Fail', behavior: 'Cascade', purge: { purgeAfterMillis: 5 } }))
      .thenState((state) => expect([...state.allPendingPurges()].map((p) => p.tableUuid).sort()).toEqual(['u-a-b-u', 'u-a-t'])));
});

describe('a recorded purge', () => {
  it('ends the pending purge', () =>
    given(...dropped)
      .when((view) => decideRecordTablePurged(view, { tableUuid: 'u-a-t', files: 12 }))
      .thenState((state) => expect(state.pendingPurge('u-a-t')).toBeUndefined()));

  it('records nothing more when repeated', () =>
    given(...dropped, purged)
      .when((view) => decideRecordTablePurged(view, { tableUuid: 'u-a-t', files: 0 }))
      .then());
});

describe('a location awaiting its purge', () => {
  it('refuses a new table there', () =>
    given(...dropped)
      .when((view) => decideDeclareTable(view, elsewhere))
      .thenFails(ErrorCode.InvalidInput, /still to be purged/));

  it('cancels the purge when the location is registered again', () =>
    given(...dropped)
      .when((view) => decideRegisterTable(view, { ...elsewhere, mode: 'Create', versions: [] }))
      .thenMatch({ type: 'TablePurgeCanceled' }, { type: 'TableRegistered' }));

  it('holds the registered table, and no purge, after that', () =>
    given(...dropped)
      .when((view) => decideRegisterTable(view, { ...elsewhere, mode: 'Create', versions: [] }))
      .thenState((state) => {
        expect(state.pendingPurge('u-a-t')).toBeUndefined();
        expect(state.table(['a', 'other'])?.location).toBe(location);
      }));
});

describe('pending purges in images and drafts', () => {
  it('keeps pending purges in the state image', () => {
    const state = stateOf(...dropped);
    expect(CatalogState.fromImage(state.toImage()).pendingPurge('u-a-t')).toEqual(state.pendingPurge('u-a-t'));
  });

  it('layers a recorded purge in a draft, leaving the state under it', () => {
    const state = stateOf(...dropped);
    const draft = new DraftCatalog(state);
    for (const event of decideRecordTablePurged(draft, { tableUuid: 'u-a-t', files: 1 })) evolve(draft, { event, metadata: meta(), revision: -1 });
    expect(draft.pendingPurge('u-a-t')).toBeUndefined();
    expect(draft.purgeAtLocation(location)).toBeUndefined();
    expect(state.pendingPurge('u-a-t')).toBeDefined();
  });
});
