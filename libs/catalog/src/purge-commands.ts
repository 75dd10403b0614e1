import { CatalogEvent } from './events';
import { CatalogView, TableState } from './state';

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

/** The files of a dropped table are gone: recorded once, whoever purged them (a retried job records nothing). */
export function decideRecordTablePurged(view: CatalogView, cmd: { tableUuid: string; files: number }): CatalogEvent[] {
  const purge = view.pendingPurge(cmd.tableUuid);
  if (!purge) return [];
  return [{ type: 'TablePurged', data: { table: purge.table, tableUuid: purge.tableUuid, location: purge.location, files: cmd.files } }];
}
