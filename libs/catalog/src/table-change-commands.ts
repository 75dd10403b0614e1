import { CatalogEvent, Properties } from './events';
import { invalidInput } from './errors';
import { ObjectId } from './ids';
import { CatalogView } from './catalog-view';
import { PropertyLimits, propertyMapProblem } from './property-limits';
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
  /** Set on the table, over the properties it has; the whole map is held to `propertyLimits`. */
  properties?: Properties;
  propertyLimits?: PropertyLimits;
}

/** The audit record of a data write the server made (its manifest commit is recorded on its own). */
export function decideRecordTableDataChanged(view: CatalogView, cmd: RecordTableDataChanged): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  const properties = cmd.properties && Object.keys(cmd.properties).length ? cmd.properties : undefined;
  const problem = properties && cmd.propertyLimits ? propertyMapProblem({ ...table.properties, ...properties }, cmd.propertyLimits) : undefined;
  if (problem) throw invalidInput(`properties: the table's properties with these would break a limit: ${problem}`);
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
        ...(properties ? { properties } : {}),
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
