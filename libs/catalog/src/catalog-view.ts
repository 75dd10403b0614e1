import { GrantsState } from './grants';
import { WebhookSubscriptions } from './webhook-subscriptions';
import { ObjectId } from './ids';
import { LocationsView } from './nested-locations';
import { SortedNames } from './sorted-names';
import { NamespaceState, PendingPurge, TableState } from './table-state';
import { TransactionState } from './transaction-table';

/** Read access to catalog state: what every decide function sees. */
export interface CatalogView {
  readonly revision: number;
  namespace(id: ObjectId): NamespaceState | undefined;
  table(id: ObjectId): TableState | undefined;
  /** Do not change what this returns: use `transactionForUpdate` on a store. */
  transaction(id: string): TransactionState | undefined;
  hasTransaction(id: string): boolean;
  /** The transactions whose work is on the table (queued work): they follow it when it is renamed. */
  transactionsOfTable(id: ObjectId): string[];
  tableAtLocation(location: string): TableState | undefined;
  pendingPurge(tableUuid: string): PendingPurge | undefined;
  /** The pending purge of a dropped table that lived at `location`, if any. */
  purgeAtLocation(location: string): PendingPurge | undefined;
  /** Live tables by location, folders compared. */
  readonly tableLocations: LocationsView<TableState>;
  /** Pending purges by the location they will delete, folders compared. */
  readonly purgeLocations: LocationsView<PendingPurge>;
  childNamespaces(id: ObjectId): SortedNames;
  childTables(id: ObjectId): SortedNames;
  /** Who holds which level where; do not change it: use `grantsForUpdate` on a store. */
  readonly grants: GrantsState;
  /** The database's webhook subscriptions; change them through `webhooksForUpdate` on a store. */
  readonly webhooks: WebhookSubscriptions;
}

/** What `evolve` needs to write. `tableForUpdate` lets a draft copy a table before it changes. */
export interface CatalogStore extends CatalogView {
  putNamespace(ns: NamespaceState): void;
  removeNamespace(id: ObjectId): void;
  putTable(table: TableState): void;
  removeTable(id: ObjectId): void;
  tableForUpdate(id: ObjectId): TableState | undefined;
  putTransaction(tx: TransactionState): void;
  transactionForUpdate(id: string): TransactionState | undefined;
  putPurge(purge: PendingPurge): void;
  removePurge(tableUuid: string): void;
  grantsForUpdate(): GrantsState;
  webhooksForUpdate(): WebhookSubscriptions;
}
