import { ManifestNamingScheme, Properties } from './events';
import { ObjectId, idFromKey, keyOf, nameOf, parentOf } from './ids';
import { SortedNames } from './sorted-names';
import { branchLocation } from './manifest-names';
import { DraftLocations, LocationsView, NestedLocations } from './nested-locations';
import { BranchImage, StateImage, TableImage } from './state-image';
import { TableVersions, VersionSet } from './table-versions';
import { TransactionState, TransactionTable } from './transaction-table';

export { TransactionState } from './transaction-table';

export interface NamespaceState {
  id: ObjectId;
  properties: Properties;
}

export interface TableState {
  id: ObjectId;
  uuid: string;
  location: string;
  properties: Properties;
  managedVersioning: boolean;
  /** Registered tables were written elsewhere first; declared ones were born here. */
  origin: 'declared' | 'registered';
  versions: VersionSet;
  latestVersion?: number;
  namingScheme?: ManifestNamingScheme;
  /** Indexes requested through this catalog; their build progress is their transaction's status. */
  indexes: Map<string, IndexState>;
  /** Branches other than main, by name; absent until the table has one. */
  branches?: Map<string, BranchState>;
  /** The transaction of the last maintenance job requested on main (see maintenance.ts). */
  maintenance?: string;
}

/** A branch of a table: its own line of versions, kept by Lance under `tree/<name>/_versions`. */
export interface BranchState {
  name: string;
  parentBranch?: string;
  parentVersion: number;
  createdAtMillis: number;
  /** 'commit': recorded from a client's first commit on it; Lance's ref file names its parent branch. */
  recordedBy: 'CreateTableBranch' | 'commit';
  versions: VersionSet;
  latestVersion?: number;
  /** Indexes requested on this branch, apart from main's. */
  indexes: Map<string, IndexState>;
  /** The transaction of the last maintenance job requested on this branch. */
  maintenance?: string;
}

/** A dropped table whose files are still there, to be deleted once its time has come. */
export interface PendingPurge {
  table: ObjectId;
  tableUuid: string;
  location: string;
  purgeAfterMillis: number;
}

export interface IndexState {
  name: string;
  columns: string[];
  indexType: string;
  params: Record<string, unknown>;
  transactionId: string;
}

/** Read access to catalog state: what every decide function sees. */
export interface CatalogView {
  readonly revision: number;
  namespace(id: ObjectId): NamespaceState | undefined;
  table(id: ObjectId): TableState | undefined;
  /** Do not change what this returns: use `transactionForUpdate` on a store. */
  transaction(id: string): TransactionState | undefined;
  hasTransaction(id: string): boolean;
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
}

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
    for (const t of this.tables.values()) numbers += baseVersions(t).size * 4;
    const versionColumn = new Float64Array(numbers);
    let at = 0;
    for (const t of this.tables.values()) {
      if (tables.length > 0 && tables.length % tablesPerStep === 0) yield;
      const versions = baseVersions(t);
      const versionNumbers = versions.copyNumbersInto(versionColumn, at);
      at += versionNumbers;
      tables.push({
        ...ownFields(t),
        versionNumbers,
        versionExtras: versions.extrasList(),
        indexes: [...t.indexes.values()].map((i) => ({ ...i })),
        ...(t.branches?.size ? { branches: [...t.branches.values()].map(branchImage) } : {}),
      });
    }
    return {
      revision: this.revision,
      namespaces: [...this.namespaces.values()].map((n) => ({ id: n.id, properties: n.properties })),
      tables,
      versionColumn,
      transactions: this.transactions.toImage(),
      purges: [...this.purges.values()].map((p) => ({ ...p })),
    };
  }

  static fromImage(image: StateImage): CatalogState {
    const state = new CatalogState();
    state.revision = image.revision;
    for (const n of image.namespaces) state.putNamespace({ id: n.id, properties: n.properties });
    let at = 0;
    for (const t of image.tables) {
      const numbers = image.versionColumn.subarray(at, at + t.versionNumbers);
      at += t.versionNumbers;
      state.putTable({
        ...ownFields(t),
        versions: TableVersions.restore(t.location, numbers, t.versionExtras),
        indexes: new Map(t.indexes.map((i) => [i.name, i])),
        ...(t.branches ? { branches: new Map(t.branches.map((b) => [b.name, branchFromImage(t.location, b)])) } : {}),
      });
    }
    if (at !== image.versionColumn.length) throw new Error('the version column does not match the tables');
    state.transactions = TransactionTable.fromImage(image.transactions);
    for (const purge of image.purges) state.putPurge(purge);
    return state;
  }
}

function baseVersions(table: TableState): TableVersions {
  // Only drafts hold other kinds of version sets, and a draft is never imaged.
  if (!(table.versions instanceof TableVersions)) throw new Error(`table ${table.id.join('.')} holds draft versions`);
  return table.versions;
}

function branchImage(b: BranchState): BranchImage {
  return { ...b, versions: b.versions.values(), indexes: [...b.indexes.values()].map((i) => ({ ...i })) };
}

function branchFromImage(location: string, image: BranchImage): BranchState {
  const versions = new TableVersions(branchLocation(location, image.name));
  for (const v of image.versions) versions.add(v);
  return { ...image, versions, indexes: new Map(image.indexes.map((i) => [i.name, i])) };
}

function childSet(index: Map<string, SortedNames>, parent: ObjectId): SortedNames {
  const key = keyOf(parent);
  let set = index.get(key);
  if (!set) index.set(key, (set = new SortedNames()));
  return set;
}

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

type OwnFields = Omit<TableImage, 'versionNumbers' | 'versionExtras' | 'indexes' | 'branches'>;

/** The fields a table and its snapshot image share, optional ones only when set. */
function ownFields(t: OwnFields): OwnFields {
  return {
    id: t.id,
    uuid: t.uuid,
    location: t.location,
    properties: t.properties,
    managedVersioning: t.managedVersioning,
    origin: t.origin,
    ...(t.latestVersion !== undefined ? { latestVersion: t.latestVersion } : {}),
    ...(t.namingScheme !== undefined ? { namingScheme: t.namingScheme } : {}),
    ...(t.maintenance !== undefined ? { maintenance: t.maintenance } : {}),
  };
}
