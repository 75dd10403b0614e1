import { CatalogView } from './catalog-view';
import { invalidInput } from './errors';
import { ObjectId, sameId } from './ids';
import { locationKey } from './nested-locations';
import { PendingPurge, TableState } from './table-state';
import { withoutTrailingSlashes } from './slashes';

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
  return [withoutTrailingSlashes(databaseRoot), ...dirs, leaf].join('/');
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
export function requireOwnFolder(view: CatalogView, location: string, except?: ObjectId): PendingPurge | undefined {
  if (couldBeNamespaceFolder(location)) {
    throw invalidInput(
      `location '${location}' is a folder where namespaces keep their tables, not a table's own`,
      "Name a folder of the table's own, such as '<name>.lance'.",
    );
  }
  const other = (t: TableState) => !(except && sameId(t.id, except));
  const holder = view.tableAtLocation(location);
  // Not named: a caller's grants may hide that table from it.
  if (holder && other(holder)) throw invalidInput(`location '${location}' already belongs to another table`, OWN_FOLDER);
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
