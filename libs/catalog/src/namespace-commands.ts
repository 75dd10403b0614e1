import { CatalogError, ErrorCode, invalidInput } from './errors';
import { CatalogEvent, Properties } from './events';
import { ObjectId, displayId, parentOf } from './ids';
import { CatalogView } from './catalog-view';
import { PurgeSchedule, droppedTableEvents } from './purge-commands';

export type CreateNamespaceMode = 'Create' | 'ExistOk' | 'Overwrite';
export const CREATE_NAMESPACE_MODES: readonly CreateNamespaceMode[] = ['Create', 'ExistOk', 'Overwrite'];
export type DropNamespaceMode = 'Fail' | 'Skip';
export const DROP_NAMESPACE_MODES: readonly DropNamespaceMode[] = ['Fail', 'Skip'];
export type DropNamespaceBehavior = 'Restrict' | 'Cascade';
export const DROP_NAMESPACE_BEHAVIORS: readonly DropNamespaceBehavior[] = ['Restrict', 'Cascade'];

export interface CreateNamespace {
  id: ObjectId;
  mode: CreateNamespaceMode;
  properties: Properties;
}

export function requireNamespace(view: CatalogView, id: ObjectId) {
  const ns = view.namespace(id);
  if (!ns) throw namespaceNotFound(id);
  return ns;
}

/** What a missing namespace answers (and one the caller may not see: the same words). */
export function namespaceNotFound(id: ObjectId): CatalogError {
  return new CatalogError(ErrorCode.NamespaceNotFound, `namespace '${displayId(id)}' does not exist`);
}

export function decideCreateNamespace(view: CatalogView, cmd: CreateNamespace): CatalogEvent[] {
  if (cmd.id.length === 0) {
    if (cmd.mode === 'ExistOk') return [];
    throw new CatalogError(
      cmd.mode === 'Create' ? ErrorCode.NamespaceAlreadyExists : ErrorCode.InvalidInput,
      cmd.mode === 'Create' ? 'the root namespace always exists' : 'the root namespace cannot be overwritten',
    );
  }
  requireNamespace(view, parentOf(cmd.id));
  const created: CatalogEvent = { type: 'NamespaceCreated', data: { namespace: cmd.id, properties: cmd.properties } };
  if (!view.namespace(cmd.id)) return [created];
  switch (cmd.mode) {
    case 'Create':
      throw new CatalogError(ErrorCode.NamespaceAlreadyExists, `namespace '${displayId(cmd.id)}' already exists`);
    case 'ExistOk':
      return [];
    case 'Overwrite':
      return [...dropSubtree(view, cmd.id), created];
  }
}

export interface DropNamespace {
  id: ObjectId;
  mode: DropNamespaceMode;
  behavior: DropNamespaceBehavior;
  /** When the files of the tables it drops are to be purged; absent: they are kept. */
  purge?: PurgeSchedule;
}

export function decideDropNamespace(view: CatalogView, cmd: DropNamespace): CatalogEvent[] {
  if (cmd.id.length === 0) throw invalidInput('the root namespace cannot be dropped');
  if (!view.namespace(cmd.id)) {
    if (cmd.mode === 'Skip') return [];
    throw new CatalogError(ErrorCode.NamespaceNotFound, `namespace '${displayId(cmd.id)}' does not exist`);
  }
  const tables = view.childTables(cmd.id).size;
  const namespaces = view.childNamespaces(cmd.id).size;
  if (cmd.behavior === 'Restrict' && tables + namespaces > 0) {
    throw new CatalogError(
      ErrorCode.NamespaceNotEmpty,
      `namespace '${displayId(cmd.id)}' is not empty: it holds ${namespaces} namespace(s) and ${tables} table(s)`,
      'Drop its contents first, or drop it with behavior Cascade.',
    );
  }
  return dropSubtree(view, cmd.id, cmd.purge);
}

/** Tables first, then namespaces deepest first, so replaying the events never sees an orphan. */
function dropSubtree(view: CatalogView, id: ObjectId, purge?: PurgeSchedule): CatalogEvent[] {
  const events: CatalogEvent[] = [];
  for (const name of view.childNamespaces(id).toArray()) events.push(...dropSubtree(view, [...id, name], purge));
  for (const name of view.childTables(id).toArray()) events.push(...droppedTableEvents(view.table([...id, name])!, purge));
  events.push({ type: 'NamespaceDropped', data: { namespace: id } });
  return events;
}
