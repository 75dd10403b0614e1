import { GrantsState } from './grants';
import { WebhookSubscriptions } from './webhook-subscriptions';
import { ObjectId, idFromKey, keyOf } from './ids';
import { CatalogStore, CatalogView } from './catalog-view';
import { DraftLocations } from './nested-locations';
import { SortedNames } from './sorted-names';
import { NamespaceState, PendingPurge, TableState } from './table-state';
import { TransactionState } from './transaction-table';

/**
 * Pending changes layered over a state without touching it: lets a batch decide each operation
 * against the effects of the ones before it, and throw everything away if one fails.
 */
export class DraftCatalog implements CatalogStore {
  private readonly namespaces = new Map<string, NamespaceState | null>();
  private readonly tables = new Map<string, TableState | null>();
  private readonly transactions = new Map<string, TransactionState>();
  private readonly purges = new Map<string, PendingPurge | null>();
  readonly tableLocations: DraftLocations<TableState>;
  readonly purgeLocations: DraftLocations<PendingPurge>;
  /** A copy of the base's grants, made only when a grant changes on the draft. */
  private draftGrants?: GrantsState;
  private draftWebhooks?: WebhookSubscriptions;

  constructor(private readonly base: CatalogView) {
    this.tableLocations = new DraftLocations(
      base.tableLocations,
      (t) => t.location,
      (t) => !this.tables.has(keyOf(t.id)),
      () => [...this.tables].map(([k, current]) => ({ original: base.table(idFromKey(k)), current: current ?? undefined })),
    );
    this.purgeLocations = new DraftLocations(
      base.purgeLocations,
      (p) => p.location,
      (p) => !this.purges.has(p.tableUuid),
      () => [...this.purges].map(([uuid, current]) => ({ original: base.pendingPurge(uuid), current: current ?? undefined })),
    );
  }

  get revision() {
    return this.base.revision;
  }
  namespace(id: ObjectId) {
    const k = keyOf(id);
    return this.namespaces.has(k) ? (this.namespaces.get(k) ?? undefined) : this.base.namespace(id);
  }
  table(id: ObjectId) {
    const k = keyOf(id);
    return this.tables.has(k) ? (this.tables.get(k) ?? undefined) : this.base.table(id);
  }
  transaction(id: string) {
    return this.transactions.get(id) ?? this.base.transaction(id);
  }
  hasTransaction(id: string) {
    return this.transactions.has(id) || this.base.hasTransaction(id);
  }
  transactionsOfTable(id: ObjectId) {
    const k = keyOf(id);
    const onTable = (tx: TransactionState) => tx.table !== undefined && keyOf(tx.table) === k;
    const ids = this.base.transactionsOfTable(id).filter((t) => !this.transactions.has(t));
    for (const tx of this.transactions.values()) if (onTable(tx)) ids.push(tx.id);
    return ids;
  }
  tableAtLocation(location: string) {
    return this.tableLocations.at(location);
  }
  pendingPurge(tableUuid: string) {
    return this.purges.has(tableUuid) ? (this.purges.get(tableUuid) ?? undefined) : this.base.pendingPurge(tableUuid);
  }
  purgeAtLocation(location: string) {
    return this.purgeLocations.at(location);
  }
  putPurge(purge: PendingPurge) {
    this.replacePurge(purge.tableUuid, purge);
  }
  removePurge(tableUuid: string) {
    this.replacePurge(tableUuid, null);
  }
  private replacePurge(tableUuid: string, next: PendingPurge | null) {
    if (this.purgeLocations.tracking) {
      this.purgeLocations.replace({
        previous: this.purges.get(tableUuid) ?? undefined,
        original: this.purges.has(tableUuid) ? undefined : this.base.pendingPurge(tableUuid),
        current: next ?? undefined,
      });
    }
    this.purges.set(tableUuid, next);
  }
  childNamespaces(id: ObjectId) {
    return withOverlay(this.base.childNamespaces(id), id, this.namespaces);
  }
  childTables(id: ObjectId) {
    return withOverlay(this.base.childTables(id), id, this.tables);
  }
  get grants() {
    return this.draftGrants ?? this.base.grants;
  }
  grantsForUpdate() {
    this.draftGrants ??= this.base.grants.copy();
    return this.draftGrants;
  }
  get webhooks() {
    return this.draftWebhooks ?? this.base.webhooks;
  }
  webhooksForUpdate() {
    this.draftWebhooks ??= this.base.webhooks.copy();
    return this.draftWebhooks;
  }
  putNamespace(ns: NamespaceState) {
    this.namespaces.set(keyOf(ns.id), ns);
  }
  removeNamespace(id: ObjectId) {
    this.namespaces.set(keyOf(id), null);
  }
  putTable(table: TableState) {
    this.replaceTable(table.id, table);
  }
  removeTable(id: ObjectId) {
    this.replaceTable(id, null);
  }
  private replaceTable(id: ObjectId, next: TableState | null) {
    const k = keyOf(id);
    if (this.tableLocations.tracking) {
      this.tableLocations.replace({
        previous: this.tables.get(k) ?? undefined,
        original: this.tables.has(k) ? undefined : this.base.table(id),
        current: next ?? undefined,
      });
    }
    this.tables.set(k, next);
  }
  tableForUpdate(id: ObjectId) {
    const k = keyOf(id);
    if (this.tables.has(k)) return this.tables.get(k) ?? undefined;
    const original = this.base.table(id);
    if (!original) return undefined;
    // Versions are layered, not copied: a commit costs the same however many versions the table has.
    const copy: TableState = { ...original, versions: original.versions.draft(), indexes: new Map(original.indexes) };
    if (original.branches) {
      copy.branches = new Map([...original.branches].map(([name, b]) => [name, { ...b, versions: b.versions.draft(), indexes: new Map(b.indexes) }]));
    }
    this.replaceTable(id, copy);
    return copy;
  }
  putTransaction(tx: TransactionState) {
    this.transactions.set(tx.id, tx);
  }
  transactionForUpdate(id: string) {
    const own = this.transactions.get(id);
    if (own) return own;
    const original = this.base.transaction(id);
    if (!original) return undefined;
    const copy = { ...original, properties: { ...original.properties } };
    this.transactions.set(id, copy);
    return copy;
  }
}

function withOverlay<T extends { id: ObjectId }>(
  base: SortedNames,
  parent: ObjectId,
  overlay: Map<string, T | null>,
): SortedNames {
  if (overlay.size === 0) return base;
  const merged = new SortedNames();
  for (const name of base.toArray()) merged.add(name);
  for (const [key, value] of overlay) {
    const id = key.split('\u0000');
    if (id.length !== parent.length + 1 || !parent.every((p, i) => id[i] === p)) continue;
    if (value) merged.add(id[id.length - 1]);
    else merged.delete(id[id.length - 1]);
  }
  return merged;
}
