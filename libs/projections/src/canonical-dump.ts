import { createHash } from 'node:crypto';
import { CatalogState, keyOf } from '@app/catalog';

const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** The whole state in a stable order: two folds of the same log give byte-identical dumps. */
export function canonicalDump(state: CatalogState) {
  return {
    revision: state.revision,
    namespaces: [...state.allNamespaces()].sort(byKey((n) => keyOf(n.id))).map((n) => ({ id: n.id, properties: n.properties })),
    tables: [...state.allTables()].sort(byKey((t) => keyOf(t.id))).map((t) => ({
      id: t.id,
      uuid: t.uuid,
      location: t.location,
      properties: t.properties,
      managed_versioning: t.managedVersioning,
      origin: t.origin,
      latest_version: t.latestVersion ?? null,
      versions: [...t.versions.values()].sort((a, b) => a.version - b.version),
    })),
    transactions: [...state.allTransactions()].sort(byKey((t) => t.id)),
  };
}

export function digestOf(state: CatalogState): string {
  return createHash('sha256').update(JSON.stringify(canonicalDump(state))).digest('hex');
}
