import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, Properties } from './events';
import { ObjectId, displayId } from './ids';
import { CatalogView } from './catalog-view';
import { requireLine } from './table-line';
import { requireTable } from './table-commands';

export interface RequestTableBackfill {
  id: ObjectId;
  column: string;
  /** Whether the column is a computed one (its field carries a computed-column binding). */
  computed: boolean | undefined;
  /** Absent: the main branch. */
  branch?: string;
  /** Recorded as the job's transaction properties (see TableBackfillRequested). */
  options?: Properties;
}

/** A computed column's rows are filled by a worker; the request is recorded as a Queued transaction. */
export function decideRequestTableBackfill(view: CatalogView, cmd: RequestTableBackfill): CatalogEvent[] {
  const table = requireLine(requireTable(view, cmd.id), cmd.branch);
  if (cmd.computed === undefined) {
    throw new CatalogError(ErrorCode.TableColumnNotFound, `column '${cmd.column}' does not exist in table '${displayId(cmd.id)}'`);
  }
  if (!cmd.computed) {
    throw invalidInput(
      `column '${cmd.column}' is not a computed column: only computed columns are backfilled`,
      'Declare one with AlterTableAddColumns and a `computed` SQL expression.',
    );
  }
  const on = table.branch !== undefined ? { branch: table.branch } : {};
  const options = cmd.options && Object.keys(cmd.options).length ? { options: cmd.options } : {};
  return [{ type: 'TableBackfillRequested', data: { table: table.id, tableUuid: table.uuid, column: cmd.column, ...on, ...options } }];
}

/** A materialized view's refresh is a worker's job too, recorded as a Queued transaction. */
export function decideRequestViewRefresh(view: CatalogView, cmd: { id: ObjectId; isView: boolean; sourceVersion?: number; options?: Properties }): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  if (!cmd.isView) {
    throw invalidInput(`table '${displayId(cmd.id)}' is not a materialized view`, 'Create one with CreateMaterializedView.');
  }
  return [
    {
      type: 'MaterializedViewRefreshRequested',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        ...(cmd.sourceVersion !== undefined ? { sourceVersion: cmd.sourceVersion } : {}),
        ...(cmd.options && Object.keys(cmd.options).length ? { options: cmd.options } : {}),
      },
    },
  ];
}
