import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, Properties, VersionRecord } from './events';
import { ObjectId, displayId, parentOf, requireTableId, sameId } from './ids';
import { requireNamespace } from './namespace-commands';
import { couldBeNamespaceFolder } from './location';
import { PurgeSchedule, droppedTableEvents } from './purge-commands';
import { CatalogView } from './catalog-view';
import { PendingPurge, TableState } from './table-state';

export function requireTable(view: CatalogView, id: ObjectId): TableState {
  requireTableId(id);
  const table = view.table(id);
  if (table) return table;
  requireNamespace(view, parentOf(id));
  throw new CatalogError(ErrorCode.TableNotFound, `table '${displayId(id)}' does not exist`);
}

function refuseExisting(view: CatalogView, id: ObjectId): void {
  if (view.table(id)) throw new CatalogError(ErrorCode.TableAlreadyExists, `table '${displayId(id)}' already exists`);
  if (view.namespace(id)) {
    throw new CatalogError(ErrorCode.TableAlreadyExists, `'${displayId(id)}' already names a namespace`);
  }
}

const OWN_FOLDER = "A table's location is a folder of its own: neither another table's, nor inside one, nor holding one.";
const AWAITING_PURGE = 'Everything under that location is deleted when the purge runs; declare the table elsewhere.';

/**
 * A table's location must be a folder of its own, since dropping a table deletes everything under
 * its location: not a folder the namespace tree places tables in, not another live table's
 * location, inside it or around it, and the same for a dropped table's whose purge is pending.
 * Only the caller's input is named: the location lies inside the caller's own root, but what is
 * there is not the caller's to learn from an error. Answers a pending purge at exactly this
 * location (for RegisterTable to take the dropped table back); `except` is a table being replaced.
 */
function requireOwnFolder(view: CatalogView, location: string, except?: ObjectId): PendingPurge | undefined {
  if (couldBeNamespaceFolder(location)) {
    throw invalidInput(
      `location '${location}' is a folder where namespaces keep their tables, not a table's own`,
      "Name a folder of the table's own, such as '<name>.lance'.",
    );
  }
  const other = (t: TableState) => !(except && sameId(t.id, except));
  const holder = view.tableAtLocation(location);
  if (holder && other(holder)) throw invalidInput(`location '${location}' already belongs to table '${displayId(holder.id)}'`);
  if (view.tableLocations.enclosing(location).some((t) => t !== holder && other(t))) {
    throw invalidInput(`location '${location}' lies inside another table's location`, OWN_FOLDER);
  }
  const tables = view.tableLocations;
  if (tables.hasInside(location) && (!except || tables.inside(location).some(other))) {
    throw invalidInput(`location '${location}' holds another table's location`, OWN_FOLDER);
  }
  const purge = view.purgeAtLocation(location);
  if (view.purgeLocations.enclosing(location).some((p) => p !== purge)) {
    throw invalidInput(`location '${location}' lies inside the location of a dropped table whose files are still to be purged`, AWAITING_PURGE);
  }
  if (view.purgeLocations.hasInside(location)) {
    throw invalidInput(`location '${location}' holds the location of a dropped table whose files are still to be purged`, AWAITING_PURGE);
  }
  return purge;
}

export interface DeclareTable {
  id: ObjectId;
  tableUuid: string;
  location: string;
  properties: Properties;
  managedVersioning: boolean;
}

export function decideDeclareTable(view: CatalogView, cmd: DeclareTable): CatalogEvent[] {
  requireTableId(cmd.id);
  requireNamespace(view, parentOf(cmd.id));
  refuseExisting(view, cmd.id);
  // A new table there would be deleted with the dropped one's files.
  if (requireOwnFolder(view, cmd.location)) {
    throw invalidInput(
      `location '${cmd.location}' belongs to a dropped table whose files are still to be purged`,
      'Register the location to bring that table back, or declare the table elsewhere.',
    );
  }
  return [
    {
      type: 'TableDeclared',
      data: {
        table: cmd.id,
        tableUuid: cmd.tableUuid,
        location: cmd.location,
        properties: cmd.properties,
        managedVersioning: cmd.managedVersioning,
      },
    },
  ];
}

export type RegisterTableMode = 'Create' | 'Overwrite';
export const REGISTER_TABLE_MODES: readonly RegisterTableMode[] = ['Create', 'Overwrite'];

export interface RegisterTable {
  id: ObjectId;
  tableUuid: string;
  location: string;
  mode: RegisterTableMode;
  properties: Properties;
  managedVersioning: boolean;
  /** The manifests found at the location, imported so the catalog knows the table's history. */
  versions: VersionRecord[];
}

export function decideRegisterTable(view: CatalogView, cmd: RegisterTable): CatalogEvent[] {
  requireTableId(cmd.id);
  requireNamespace(view, parentOf(cmd.id));
  const events: CatalogEvent[] = [];
  const existing = view.table(cmd.id);
  if (existing && cmd.mode === 'Overwrite') {
    events.push({
      type: 'TableDeregistered',
      data: { table: existing.id, tableUuid: existing.uuid, location: existing.location },
    });
  } else {
    refuseExisting(view, cmd.id);
  }
  // Registering a dropped table's location before its purge brings the table back: the purge goes.
  const purge = requireOwnFolder(view, cmd.location, existing ? cmd.id : undefined);
  if (purge) {
    events.push({
      type: 'TablePurgeCanceled',
      data: { table: purge.table, tableUuid: purge.tableUuid, location: purge.location, reason: `registered again as '${displayId(cmd.id)}'` },
    });
  }
  events.push({
    type: 'TableRegistered',
    data: {
      table: cmd.id,
      tableUuid: cmd.tableUuid,
      location: cmd.location,
      properties: cmd.properties,
      managedVersioning: cmd.managedVersioning,
      versions: cmd.versions,
    },
  });
  return events;
}

export function decideDropTable(view: CatalogView, id: ObjectId, purge?: PurgeSchedule): CatalogEvent[] {
  return droppedTableEvents(requireTable(view, id), purge);
}


export function decideDeregisterTable(view: CatalogView, id: ObjectId): CatalogEvent[] {
  const table = requireTable(view, id);
  return [
    { type: 'TableDeregistered', data: { table: table.id, tableUuid: table.uuid, location: table.location } },
  ];
}

export interface RenameTable {
  id: ObjectId;
  newTableName: string;
  newNamespace?: ObjectId;
}

export function decideRenameTable(view: CatalogView, cmd: RenameTable): CatalogEvent[] {
  const table = requireTable(view, cmd.id);
  const namespace = cmd.newNamespace ?? parentOf(cmd.id);
  requireNamespace(view, namespace);
  const newTable = [...namespace, cmd.newTableName];
  refuseExisting(view, newTable);
  return [{ type: 'TableRenamed', data: { table: table.id, tableUuid: table.uuid, newTable } }];
}

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

/** Declared-only: the catalog knows the name, but no manifest has been committed yet. */
export function isOnlyDeclared(table: TableState): boolean {
  return table.managedVersioning && table.versions.size === 0;
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
