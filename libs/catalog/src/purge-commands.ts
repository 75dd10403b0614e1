import { CatalogEvent, LiveLocation } from './events';
import { CatalogView } from './catalog-view';
import { TableState } from './table-state';

/** When to delete a dropped table's files; absent: they are kept (no purge is scheduled). */
export interface PurgeSchedule {
  purgeAfterMillis: number;
}

/** The events that drop a table, with its purge when one is scheduled. */
export function droppedTableEvents(table: TableState, purge?: PurgeSchedule): CatalogEvent[] {
  const ref = { table: table.id, tableUuid: table.uuid, location: table.location };
  const events: CatalogEvent[] = [{ type: 'TableDropped', data: ref }];
  if (purge) events.push({ type: 'TablePurgeScheduled', data: { ...ref, purgeAfterMillis: purge.purgeAfterMillis } });
  return events;
}

/**
 * The live tables whose files a purge of `location` would delete or cut into: at it, inside it or
 * around it. Declaring and registering refuse such locations; a log written before they did may
 * still hold them, and the purge must not take another table's files with it.
 */
export function liveTablesAtPurge(view: CatalogView, location: string): LiveLocation[] {
  const tables = [...view.tableLocations.enclosing(location), ...view.tableLocations.inside(location)];
  return tables.map((t) => ({ table: t.id, location: t.location }));
}

/**
 * The files of a dropped table are gone: recorded once, whoever purged them (a retried job records
 * nothing). `skipped`: the live tables that kept the purge from deleting anything.
 */
export function decideRecordTablePurged(view: CatalogView, cmd: { tableUuid: string; files: number; skipped?: LiveLocation[] }): CatalogEvent[] {
  const purge = view.pendingPurge(cmd.tableUuid);
  if (!purge) return [];
  const skipped = cmd.skipped?.length ? { skipped: cmd.skipped } : {};
  return [{ type: 'TablePurged', data: { table: purge.table, tableUuid: purge.tableUuid, location: purge.location, files: cmd.files, ...skipped } }];
}
