import { Properties } from './events';
import { ObjectId } from './ids';
import { VersionRecord } from './events';
import { BranchState, IndexState, PendingPurge, TableState } from './state';
import { VersionExtras } from './table-versions';
import { TransactionTableImage } from './transaction-table';

/**
 * A whole CatalogState as plain data and typed arrays: what a snapshot stores. The numbers of
 * every table's versions sit in one column, in table order, `versionNumbers` apiece.
 */
export interface StateImage {
  revision: number;
  namespaces: Array<{ id: ObjectId; properties: Properties }>;
  tables: TableImage[];
  versionColumn: Float64Array;
  transactions: TransactionTableImage;
  /** Dropped tables whose files are still to be purged. */
  purges: PendingPurge[];
}

/** A table's own fields as they are, its versions as a count of numbers in `versionColumn`. */
export interface TableImage
  extends Pick<TableState, 'id' | 'uuid' | 'location' | 'properties' | 'managedVersioning' | 'origin' | 'latestVersion' | 'namingScheme' | 'maintenance'> {
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
