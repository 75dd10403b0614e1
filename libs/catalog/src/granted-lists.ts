import { CallerAccess } from './caller-access';
import { CatalogView } from './catalog-view';
import { ObjectId, keyOf, parentOf, sameId } from './ids';
import { TableState } from './table-state';

/**
 * What lists hold for a caller whose grants decide and which reads none of what is listed as a
 * whole (a namespace it only passes through, or the database): found from its grants, so a list
 * costs what the caller may read, never a walk of everything there is.
 */

/** Every table the caller may read: those its grants name, and all below the namespaces they name. */
export function grantedTables(view: CatalogView, caller: CallerAccess): TableState[] {
  const found = new Map<string, TableState>();
  const walked = new Set<string>();
  const walk = (namespace: ObjectId): void => {
    const key = keyOf(namespace);
    if (walked.has(key)) return;
    walked.add(key);
    for (const name of view.childTables(namespace).after()) {
      const id = [...namespace, name];
      const table = view.table(id);
      if (table) found.set(keyOf(id), table);
    }
    for (const name of view.childNamespaces(namespace).after()) walk([...namespace, name]);
  };
  const { tables, namespaces } = caller.grantedObjects();
  for (const namespace of namespaces) if (view.namespace(namespace)) walk(namespace);
  for (const id of tables) {
    const table = view.table(id);
    if (table) found.set(keyOf(id), table);
  }
  return [...found.values()];
}

/** The names of the tables directly in `namespace` the caller may read, when it may not read the namespace: its grants on them. */
export function grantedTablesIn(view: CatalogView, caller: CallerAccess, namespace: ObjectId): string[] {
  const names = new Set<string>();
  for (const id of caller.grantedObjects().tables) if (sameId(parentOf(id), namespace) && view.table(id)) names.add(id[id.length - 1]);
  return [...names].sort();
}

/** The names of the namespaces directly in `namespace` that lie on the way to one of the caller's grants (or hold one). */
export function grantedNamespacesIn(view: CatalogView, caller: CallerAccess, namespace: ObjectId): string[] {
  const names = new Set<string>();
  const { tables, namespaces } = caller.grantedObjects();
  for (const path of [...namespaces, ...tables.map(parentOf)]) {
    if (path.length <= namespace.length || !sameId(path.slice(0, namespace.length), namespace)) continue;
    const name = path[namespace.length];
    if (view.namespace([...namespace, name])) names.add(name);
  }
  return [...names].sort();
}
