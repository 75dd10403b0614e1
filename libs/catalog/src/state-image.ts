import { ManifestNamingScheme, Properties } from './events';
import { ObjectId } from './ids';
import { IndexState } from './state';
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
}

export interface TableImage {
  id: ObjectId;
  uuid: string;
  location: string;
  properties: Properties;
  managedVersioning: boolean;
  origin: 'declared' | 'registered';
  latestVersion?: number;
  namingScheme?: ManifestNamingScheme;
  versionNumbers: number;
  versionExtras: Array<[number, VersionExtras]>;
  indexes: IndexState[];
}
