import { ObjectId } from './ids';
import { locationKey } from './nested-locations';

/**
 * A filesystem-safe spelling of a name: anything outside [A-Za-z0-9_-] becomes '_', so no name
 * can produce '..', a separator or a character an object store would escape.
 */
export function safeSegment(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return safe.length ? safe : '_';
}

/**
 * Where a newly declared table lives. The table's uuid makes each declaration's location unique,
 * so a dropped table's files are never reused by a table re-created under the same name.
 */
export function defaultTableLocation(databaseRoot: string, id: ObjectId, tableUuid: string): string {
  const dirs = id.slice(0, -1).map(safeSegment);
  const leaf = `${safeSegment(id[id.length - 1])}-${tableUuid.replace(/-/g, '').slice(0, 12)}.lance`;
  return [databaseRoot.replace(/\/+$/, ''), ...dirs, leaf].join('/');
}

/** Every folder name `safeSegment` can give, so every folder the namespace tree may place tables in. */
const NAMESPACE_FOLDER = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether a location could be a folder the namespace tree places tables in: the database root or
 * a namespace's folder, now or once that namespace is created (`defaultTableLocation`). Such a folder
 * holds other tables, so it is never a table's own. A table's own folder is named as no namespace
 * folder can be: `defaultTableLocation` gives `<name>-<uuid>.lance`.
 */
export function couldBeNamespaceFolder(location: string): boolean {
  const key = locationKey(location);
  return NAMESPACE_FOLDER.test(key.slice(key.lastIndexOf('/') + 1));
}
