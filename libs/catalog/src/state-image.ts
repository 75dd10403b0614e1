import { branchLocation } from './dataset-layout';
import { Properties, VersionRecord } from './events';
import { GrantChange } from './grants';
import { WebhookSubscriptionState } from './webhook-subscriptions';
import { ObjectId } from './ids';
import { BranchState, IndexState, PendingPurge, TableState } from './table-state';
import { TableVersions, VersionExtras } from './table-versions';
import { TransactionTableImage } from './transaction-table';

/**
 * A whole CatalogState as plain data and typed arrays: what a snapshot stores. The numbers of
 * every table's versions sit in one column, in table order, `versionNumbers` apiece.
 */
export interface StateImage {
  revision: number;
  namespaces: Array<{ id: ObjectId; properties: Properties; propertiesSetBy?: string }>;
  tables: TableImage[];
  versionColumn: Float64Array;
  transactions: TransactionTableImage;
  /** Dropped tables whose files are still to be purged. */
  purges: PendingPurge[];
  /** Every grant change, in log order (absent: none). */
  grants?: GrantChange[];
  /** The webhook subscriptions (absent: none). */
  webhooks?: WebhookSubscriptionState[];
}

/** A table's own fields as they are, its versions as a count of numbers in `versionColumn`. */
export interface TableImage
  extends Pick<TableState, 'id' | 'uuid' | 'location' | 'properties' | 'propertiesSetBy' | 'managedVersioning' | 'origin' | 'latestVersion' | 'namingScheme' | 'maintenance'> {
  versionNumbers: number;
  versionExtras: Array<[number, VersionExtras]>;
  indexes: IndexState[];
  /** Few per table, so their versions are kept as records. */
  branches?: BranchImage[];
}

export interface BranchImage extends Omit<BranchState, 'versions' | 'indexes'> {
  versions: VersionRecord[];
  indexes: IndexState[];
}

/** How many numbers of the version column a table's image takes. */
export function versionNumbersOf(table: TableState): number {
  return baseVersions(table).size * 4;
}

/** A table as data, its version numbers written into `column` at `at`. */
export function tableImage(t: TableState, column: Float64Array, at: number): TableImage {
  const versions = baseVersions(t);
  return {
    ...ownFields(t),
    versionNumbers: versions.copyNumbersInto(column, at),
    versionExtras: versions.extrasList(),
    indexes: [...t.indexes.values()].map((i) => ({ ...i })),
    ...(t.branches?.size ? { branches: [...t.branches.values()].map(branchImage) } : {}),
  };
}

/** The table an image holds, `numbers` being its part of the version column. */
export function tableFromImage(t: TableImage, numbers: ArrayLike<number>): TableState {
  return {
    ...ownFields(t),
    versions: TableVersions.restore(t.location, numbers, t.versionExtras),
    indexes: new Map(t.indexes.map((i) => [i.name, i])),
    ...(t.branches ? { branches: new Map(t.branches.map((b) => [b.name, branchFromImage(t.location, b)])) } : {}),
  };
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

type OwnFields = Omit<TableImage, 'versionNumbers' | 'versionExtras' | 'indexes' | 'branches'>;

/** The fields a table and its snapshot image share, optional ones only when set. */
function ownFields(t: OwnFields): OwnFields {
  return {
    id: t.id,
    uuid: t.uuid,
    location: t.location,
    properties: t.properties,
    ...(t.propertiesSetBy !== undefined ? { propertiesSetBy: t.propertiesSetBy } : {}),
    managedVersioning: t.managedVersioning,
    origin: t.origin,
    ...(t.latestVersion !== undefined ? { latestVersion: t.latestVersion } : {}),
    ...(t.namingScheme !== undefined ? { namingScheme: t.namingScheme } : {}),
    ...(t.maintenance !== undefined ? { maintenance: t.maintenance } : {}),
  };
}
