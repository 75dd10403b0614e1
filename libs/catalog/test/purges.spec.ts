import {
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
import { declared, expectCode, fold, given, meta, ns } from './support';

const location = '/wh/default/a/t-u-a-t.lance';

describe('the purge of dropped tables', () => {
  it('schedules a purge with the drop when asked, and keeps it pending until it is recorded', () => {
    const state = given(ns('a'), declared(['a', 't']));
    const events = decideDropTable(state, ['a', 't'], { purgeAfterMillis: 1000 });
    expect(events.map((e) => e.type)).toEqual(['TableDropped', 'TablePurgeScheduled']);
    fold(state, events);
    expect(state.table(['a', 't'])).toBeUndefined();
    expect(state.pendingPurge('u-a-t')).toEqual({ table: ['a', 't'], tableUuid: 'u-a-t', location, purgeAfterMillis: 1000 });
    expect(state.purgeAtLocation(location)?.tableUuid).toBe('u-a-t');
    fold(state, decideRecordTablePurged(state, { tableUuid: 'u-a-t', files: 12 }));
    expect(state.pendingPurge('u-a-t')).toBeUndefined();
    // A repeated purge records nothing more.
    expect(decideRecordTablePurged(state, { tableUuid: 'u-a-t', files: 0 })).toEqual([]);
  });

  it('keeps the files of a drop that schedules no purge', () => {
    const state = given(ns('a'), declared(['a', 't']));
    expect(decideDropTable(state, ['a', 't']).map((e) => e.type)).toEqual(['TableDropped']);
  });

  it('schedules a purge for every table a cascading namespace drop drops', () => {
    const state = given(ns('a'), ns('a', 'b'), declared(['a', 't']), declared(['a', 'b', 'u']));
    const events = decideDropNamespace(state, { id: ['a'], mode: 'Fail', behavior: 'Cascade', purge: { purgeAfterMillis: 5 } });
    expect(events.filter((e) => e.type === 'TablePurgeScheduled').map((e) => e.data.tableUuid).sort()).toEqual(['u-a-b-u', 'u-a-t']);
    fold(state, events);
    expect([...state.allPendingPurges()]).toHaveLength(2);
  });

  it('refuses a new table at a location awaiting its purge, and cancels the purge when the location is registered again', () => {
    const state = given(ns('a'), declared(['a', 't']));
    fold(state, decideDropTable(state, ['a', 't'], { purgeAfterMillis: 1000 }));
    const declare = { id: ['a', 'other'], tableUuid: 'x', location, properties: {}, managedVersioning: true };
    expectCode(() => decideDeclareTable(state, declare), ErrorCode.InvalidInput, /still to be purged/);
    const events = decideRegisterTable(state, { ...declare, mode: 'Create', versions: [] });
    expect(events.map((e) => e.type)).toEqual(['TablePurgeCanceled', 'TableRegistered']);
    fold(state, events);
    expect(state.pendingPurge('u-a-t')).toBeUndefined();
    expect(state.table(['a', 'other'])?.location).toBe(location);
  });

  it('keeps pending purges in the state image, and layers them in drafts', () => {
    const state = given(ns('a'), declared(['a', 't']));
    fold(state, decideDropTable(state, ['a', 't'], { purgeAfterMillis: 7 }));
    const restored = CatalogState.fromImage(state.toImage());
    expect(restored.pendingPurge('u-a-t')).toEqual(state.pendingPurge('u-a-t'));
    const draft = new DraftCatalog(state);
    for (const event of decideRecordTablePurged(draft, { tableUuid: 'u-a-t', files: 1 })) evolve(draft, { event, metadata: meta(), revision: -1 });
    expect(draft.pendingPurge('u-a-t')).toBeUndefined();
    expect(draft.purgeAtLocation(location)).toBeUndefined();
    expect(state.pendingPurge('u-a-t')).toBeDefined();
  });
});
