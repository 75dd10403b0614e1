import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, Properties, VersionRecord } from './events';
import { ObjectId, displayId, parentOf, requireTableId } from './ids';
import { requireNamespace } from './namespace-commands';
import { requireOwnFolder } from './location';
import { PurgeSchedule, droppedTableEvents } from './purge-commands';
import { CatalogView } from './catalog-view';
import { TableState } from './table-state';

export function requireTable(view: CatalogView, id: ObjectId): TableState {
  requireTableId(id);
  const table = view.table(id);
  if (table) return table;
  requireNamespace(view, parentOf(id));
  throw tableNotFound(id);
}

/** What a missing table answers (and one the caller may not read: the same words). */
export function tableNotFound(id: ObjectId): CatalogError {
  return new CatalogError(ErrorCode.TableNotFound, `table '${displayId(id)}' does not exist`);
}

function refuseExisting(view: CatalogView, id: ObjectId): void {
  if (view.table(id)) throw new CatalogError(ErrorCode.TableAlreadyExists, `table '${displayId(id)}' already exists`);
  if (view.namespace(id)) {
    throw new CatalogError(ErrorCode.TableAlreadyExists, `'${displayId(id)}' already names a namespace`);
  }
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

/** Declared-only: the catalog knows the name, but no manifest has been committed yet. */
export function isOnlyDeclared(table: TableState): boolean {
  return table.managedVersioning && table.versions.size === 0;
}
