import { ObjectId } from './ids';

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
