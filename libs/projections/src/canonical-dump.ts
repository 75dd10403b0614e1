import { createHash } from 'node:crypto';
import { CatalogState, NamespaceState, PendingPurge, TableState, branchesOf, keyOf } from '@app/catalog';

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
  // Only tables with branches carry the key, so a catalog without branches digests as it always did.
  ...(t.branches?.size ? { branches: branchesOf(t).map((b) => ({ ...b, versions: b.versions.values(), indexes: [...b.indexes.values()] })) } : {}),
});

/** The whole state in a stable order: two folds of the same log give byte-identical dumps. */
export function canonicalDump(state: CatalogState) {
  return {
    revision: state.revision,
    namespaces: [...state.allNamespaces()].sort(byKey((n) => keyOf(n.id))).map(namespaceJson),
    tables: [...state.allTables()].sort(byKey((t) => keyOf(t.id))).map(tableJson),
    transactions: transactionIdsInOrder(state).map((id) => state.transaction(id)!),
    purges: purgesInOrder(state),
    ...grantsOf(state),
    ...webhooksOf(state),
  };
}

/** Every grant change in log order; only a catalog with grants carries the key, so others digest as they always did. */
function grantsOf(state: CatalogState): { grants?: unknown[] } {
  const history = state.grants.history();
  return history.length ? { grants: [...history] } : {};
}

/** The webhook subscriptions by id; only a catalog with some carries the key. */
function webhooksOf(state: CatalogState): { webhooks?: unknown[] } {
  const all = state.webhooks.all().sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : a.subscriptionId > b.subscriptionId ? 1 : 0));
  return all.length ? { webhooks: all } : {};
}

function purgesInOrder(state: CatalogState): PendingPurge[] {
  return [...state.allPendingPurges()].sort(byKey((p) => p.tableUuid));
}

/** How much of the digest is worked out between two turns of the event loop (each about 10 to 20 ms). */
const TABLES_PER_STEP = 2000;
const TRANSACTIONS_PER_STEP = 5000;
const IDS_PER_SORTED_RUN = 25_000;

/**
 * SHA-256 of `JSON.stringify(canonicalDump(state))`, written piece by piece: the same bytes
 * without ever holding the whole dump (a million transactions) as objects or as one string.
 */
export function digestOf(state: CatalogState): string {
  const steps = digestSteps(state);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The digest as a generator that stops after each bounded piece of work, so a caller can give the
 * event loop a turn in between: on a million events the whole digest takes seconds. The state must
 * not change until the generator is done (CatalogProjection.digest runs it inside its queue).
 * Transaction ids are sorted in runs and merged, since one sort of a million strings is itself a
 * second of blocking.
 */
export function* digestSteps(state: CatalogState): Generator<void, string, void> {
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
  // Each key worked out once, not once per comparison.
  const tables = [...state.allTables()].map((t): [string, TableState] => [keyOf(t.id), t]).sort(byKey(([key]) => key));
  yield;
  for (let i = 0; i < tables.length; i++) {
    write((i ? ',' : '') + JSON.stringify(tableJson(tables[i][1])));
    if (i % TABLES_PER_STEP === TABLES_PER_STEP - 1) yield;
  }
  write('],"transactions":[');
  const runs: string[][] = [];
  let run: string[] = [];
  for (const id of state.transactionIds()) {
    run.push(id);
    if (run.length === IDS_PER_SORTED_RUN) {
      // The default sort compares UTF-16 code units, as `<` does.
      runs.push(run.sort());
      run = [];
      yield;
    }
  }
  runs.push(run.sort());
  let written = 0;
  for (const id of mergeSorted(runs)) {
    write((written ? ',' : '') + JSON.stringify(state.transaction(id)));
    if (++written % TRANSACTIONS_PER_STEP === 0) yield;
  }
  const grants = grantsOf(state).grants;
  const webhooks = webhooksOf(state).webhooks;
  write(
    `],"purges":${JSON.stringify(purgesInOrder(state))}${grants ? `,"grants":${JSON.stringify(grants)}` : ''}${webhooks ? `,"webhooks":${JSON.stringify(webhooks)}` : ''}}`,
  );
  return hash.update(buffered).digest('hex');
}

/** The strings of sorted runs in one ascending order (few runs: the smallest head is found by a scan). */
function* mergeSorted(runs: string[][]): Generator<string> {
  const at = runs.map(() => 0);
  for (;;) {
    let best = -1;
    for (let r = 0; r < runs.length; r++) {
      if (at[r] < runs[r].length && (best < 0 || runs[r][at[r]] < runs[best][at[best]])) best = r;
    }
    if (best < 0) return;
    yield runs[best][at[best]++];
  }
}

function transactionIdsInOrder(state: CatalogState): string[] {
  // The default sort compares UTF-16 code units, as `<` does.
  return [...state.transactionIds()].sort();
}
