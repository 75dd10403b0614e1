import { GrantsState } from './grants';
import { WebhookSubscriptions } from './webhook-subscriptions';
import { ObjectId, keyOf, nameOf, parentOf } from './ids';
import { CatalogStore } from './catalog-view';
import { NestedLocations } from './nested-locations';
import { SortedNames } from './sorted-names';
import { StateImage, TableImage, tableFromImage, tableImage, versionNumbersOf } from './state-image';
import { NamespaceState, PendingPurge, TableState } from './table-state';
import { TransactionState, TransactionTable } from './transaction-table';

const EMPTY = new SortedNames();

/** The folded state of one database's catalog, indexed for the queries the protocol asks. */
export class CatalogState implements CatalogStore {
  revision = -1;
  private readonly namespaces = new Map<string, NamespaceState>();
  private readonly tables = new Map<string, TableState>();
  private transactions = new TransactionTable();
  readonly tableLocations = new NestedLocations<TableState>();
  private readonly nsChildren = new Map<string, SortedNames>();
  private readonly tableChildren = new Map<string, SortedNames>();
  private readonly purges = new Map<string, PendingPurge>();
  readonly purgeLocations = new NestedLocations<PendingPurge>();
  private grantsHeld = new GrantsState();
  private webhookSubscriptions = new WebhookSubscriptions();

  constructor() {
    this.namespaces.set(keyOf([]), { id: [], properties: {} });
  }

  namespace(id: ObjectId) {
    return this.namespaces.get(keyOf(id));
  }
  table(id: ObjectId) {
    return this.tables.get(keyOf(id));
  }
  transaction(id: string) {
    return this.transactions.get(id);
  }
  hasTransaction(id: string) {
    return this.transactions.has(id);
  }
  tableAtLocation(location: string) {
    return this.tableLocations.at(location);
  }
  pendingPurge(tableUuid: string) {
    return this.purges.get(tableUuid);
  }
  purgeAtLocation(location: string) {
    return this.purgeLocations.at(location);
  }
  allPendingPurges(): IterableIterator<PendingPurge> {
    return this.purges.values();
  }
  childNamespaces(id: ObjectId) {
    return this.nsChildren.get(keyOf(id)) ?? EMPTY;
  }
  childTables(id: ObjectId) {
    return this.tableChildren.get(keyOf(id)) ?? EMPTY;
  }
  get namespaceCount() {
    return this.namespaces.size;
  }
  get tableCount() {
    return this.tables.size;
  }
  /**
   * Forgets the transactions that ended before `cutoffMillis` (their events stay in the log, where
   * history and DescribeTransaction still find them), except those the state refers to: index
   * builds of live indexes and the last maintenance job of each line. Answers how many it forgot.
   */
  forgetTransactionsBefore(cutoffMillis: number): number {
    const keep = new Set<string>();
    for (const t of this.tables.values()) {
      for (const line of [t, ...(t.branches?.values() ?? [])]) {
        for (const index of line.indexes.values()) keep.add(index.transactionId);
        if (line.maintenance !== undefined) keep.add(line.maintenance);
      }
    }
    const { table, forgotten } = this.transactions.withoutFinishedBefore(cutoffMillis, keep);
    if (forgotten > 0) this.transactions = table;
    return forgotten;
  }

  get transactionCount() {
    return this.transactions.size;
  }
  allTables(): IterableIterator<TableState> {
    return this.tables.values();
  }
  allNamespaces(): IterableIterator<NamespaceState> {
    return this.namespaces.values();
  }
  allTransactions(): IterableIterator<TransactionState> {
    return this.transactions.values();
  }
  transactionIds(): IterableIterator<string> {
    return this.transactions.ids();
  }

  get grants() {
    return this.grantsHeld;
  }
  grantsForUpdate() {
    return this.grantsHeld;
  }
  get webhooks() {
    return this.webhookSubscriptions;
  }
  webhooksForUpdate() {
    return this.webhookSubscriptions;
  }
  putNamespace(ns: NamespaceState) {
    this.namespaces.set(keyOf(ns.id), ns);
    if (ns.id.length > 0) childSet(this.nsChildren, parentOf(ns.id)).add(nameOf(ns.id));
  }
  removeNamespace(id: ObjectId) {
    this.namespaces.delete(keyOf(id));
    this.nsChildren.get(keyOf(parentOf(id)))?.delete(nameOf(id));
  }
  putTable(table: TableState) {
    const previous = this.tables.get(keyOf(table.id));
    if (previous) this.tableLocations.remove(previous.location, previous);
    this.tables.set(keyOf(table.id), table);
    this.tableLocations.add(table.location, table);
    childSet(this.tableChildren, parentOf(table.id)).add(nameOf(table.id));
  }
  removeTable(id: ObjectId) {
    const previous = this.tables.get(keyOf(id));
    if (!previous) return;
    this.tables.delete(keyOf(id));
    this.tableLocations.remove(previous.location, previous);
    this.tableChildren.get(keyOf(parentOf(id)))?.delete(nameOf(id));
  }
  tableForUpdate(id: ObjectId) {
    return this.table(id);
  }
  putTransaction(tx: TransactionState) {
    this.transactions.put(tx);
  }
  transactionForUpdate(id: string) {
    return this.transactions.forUpdate(id);
  }
  transactionsOfTable(id: ObjectId) {
    return this.transactions.idsOfTable(id);
  }
  putPurge(purge: PendingPurge) {
    const previous = this.purges.get(purge.tableUuid);
    if (previous) this.purgeLocations.remove(previous.location, previous);
    this.purges.set(purge.tableUuid, purge);
    this.purgeLocations.add(purge.location, purge);
  }
  removePurge(tableUuid: string) {
    const purge = this.purges.get(tableUuid);
    if (!purge) return;
    this.purges.delete(tableUuid);
    this.purgeLocations.remove(purge.location, purge);
  }

  /** A copy of the whole state as data; later changes to the state do not reach it. */
  toImage(): StateImage {
    const steps = this.imageSteps(Infinity);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /**
   * The same copy in steps of `tablesPerStep` tables, so a caller can let other work run between
   * them; the state must not change until the last step.
   */
  *imageSteps(tablesPerStep: number): Generator<void, StateImage> {
    const tables: TableImage[] = [];
    let numbers = 0;
    for (const t of this.tables.values()) numbers += versionNumbersOf(t);
    const versionColumn = new Float64Array(numbers);
    let at = 0;
    for (const t of this.tables.values()) {
      if (tables.length > 0 && tables.length % tablesPerStep === 0) yield;
      const image = tableImage(t, versionColumn, at);
      at += image.versionNumbers;
      tables.push(image);
    }
    return {
      revision: this.revision,
      namespaces: [...this.namespaces.values()].map((n) => ({ id: n.id, properties: n.properties, ...(n.propertiesSetBy !== undefined ? { propertiesSetBy: n.propertiesSetBy } : {}) })),
      tables,
      versionColumn,
      transactions: this.transactions.toImage(),
      purges: [...this.purges.values()].map((p) => ({ ...p })),
      ...(this.grantsHeld.history().length ? { grants: this.grantsHeld.history().map((c) => ({ ...c })) } : {}),
      ...(this.webhookSubscriptions.size ? { webhooks: this.webhookSubscriptions.all().map((w) => structuredClone(w)) } : {}),
    };
  }

  static fromImage(image: StateImage): CatalogState {
    const state = new CatalogState();
    state.revision = image.revision;
    for (const n of image.namespaces) state.putNamespace({ id: n.id, properties: n.properties, ...(n.propertiesSetBy !== undefined ? { propertiesSetBy: n.propertiesSetBy } : {}) });
    let at = 0;
    for (const t of image.tables) {
      const numbers = image.versionColumn.subarray(at, at + t.versionNumbers);
      at += t.versionNumbers;
      state.putTable(tableFromImage(t, numbers));
    }
    if (at !== image.versionColumn.length) throw new Error('the version column does not match the tables');
    state.transactions = TransactionTable.fromImage(image.transactions);
    for (const purge of image.purges) state.putPurge(purge);
    if (image.grants) state.grantsHeld = GrantsState.fromHistory(image.grants);
    if (image.webhooks) state.webhookSubscriptions = new WebhookSubscriptions(image.webhooks);
    return state;
  }
}

function childSet(index: Map<string, SortedNames>, parent: ObjectId): SortedNames {
  const key = keyOf(parent);
  let set = index.get(key);
  if (!set) index.set(key, (set = new SortedNames()));
  return set;
}
