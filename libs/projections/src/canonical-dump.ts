import { createHash } from 'node:crypto';
import { CatalogState, NamespaceState, TableState, keyOf } from '@app/catalog';

const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

const namespaceJson = (n: NamespaceState) => ({ id: n.id, properties: n.properties });
const tableJson = (t: TableState) => ({
  id: t.id,
  uuid: t.uuid,
  location: t.location,
  properties: t.properties,
  managed_versioning: t.managedVersioning,
  origin: t.origin,
  latest_version: t.latestVersion ?? null,
  versions: t.versions.values(),
});

/** The whole state in a stable order: two folds of the same log give byte-identical dumps. */
export function canonicalDump(state: CatalogState) {
  return {
    revision: state.revision,
    namespaces: [...state.allNamespaces()].sort(byKey((n) => keyOf(n.id))).map(namespaceJson),
    tables: [...state.allTables()].sort(byKey((t) => keyOf(t.id))).map(tableJson),
    transactions: transactionIdsInOrder(state).map((id) => state.transaction(id)!),
  };
}

/**
 * SHA-256 of `JSON.stringify(canonicalDump(state))`, written piece by piece: the same bytes
 * without ever holding the whole dump (a million transactions) as objects or as one string.
 */
export function digestOf(state: CatalogState): string {
  const hash = createHash('sha256');
  let buffered = '';
  const write = (s: string) => {
    buffered += s;
    if (buffered.length > 1 << 20) {
      hash.update(buffered);
      buffered = '';
    }
  };
  write(`{"revision":${JSON.stringify(state.revision)},"namespaces":`);
  write(JSON.stringify([...state.allNamespaces()].sort(byKey((n) => keyOf(n.id))).map(namespaceJson)));
  write(',"tables":[');
  [...state.allTables()].sort(byKey((t) => keyOf(t.id))).forEach((t, i) => write((i ? ',' : '') + JSON.stringify(tableJson(t))));
  write('],"transactions":[');
  transactionIdsInOrder(state).forEach((id, i) => write((i ? ',' : '') + JSON.stringify(state.transaction(id))));
  write(']}');
  return hash.update(buffered).digest('hex');
}

function transactionIdsInOrder(state: CatalogState): string[] {
  // The default sort compares UTF-16 code units, as `<` does.
  return [...state.transactionIds()].sort();
}
