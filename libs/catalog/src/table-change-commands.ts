import { CatalogEvent } from './events';
import { ObjectId } from './ids';
import { CatalogView } from './catalog-view';
import { requireTable } from './table-commands';

/** What the server's own writes to a table record beside their commits: restores, data changes, tag changes. */

export interface RecordTableRestored {
  id: ObjectId;
  fromVersion: number;
  version?: number;
  branch?: string;
}

export function decideRecordTableRestored(view: CatalogView, cmd: RecordTableRestored): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  return [
    {
      type: 'TableRestored',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        fromVersion: cmd.fromVersion,
        version: cmd.version,
        ...(cmd.branch !== undefined ? { branch: cmd.branch } : {}),
      },
    },
  ];
}

export interface RecordTableDataChanged {
  id: ObjectId;
  operation: string;
  version: number;
  rows?: number;
  /** Absent: the main branch. */
  branch?: string;
}

/** The audit record of a data write the server made (its manifest commit is recorded on its own). */
export function decideRecordTableDataChanged(view: CatalogView, cmd: RecordTableDataChanged): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  return [
    {
      type: 'TableDataChanged',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        operation: cmd.operation,
        version: cmd.version,
        ...(cmd.rows !== undefined ? { rows: cmd.rows } : {}),
        ...(cmd.branch !== undefined ? { branch: cmd.branch } : {}),
      },
    },
  ];
}

/** The audit record of a tag change (Lance keeps the tag itself in the dataset). */
export function decideRecordTableTagChanged(
  view: CatalogView,
  cmd: { id: ObjectId; tag: string; change: 'created' | 'updated' | 'deleted'; version?: number; branch?: string },
): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  return [
    {
      type: 'TableTagChanged',
      data: {
        table: table.id,
        tableUuid: table.uuid,
        tag: cmd.tag,
        change: cmd.change,
        ...(cmd.version !== undefined ? { version: cmd.version } : {}),
        ...(cmd.branch !== undefined ? { branch: cmd.branch } : {}),
      },
    },
  ];
}
