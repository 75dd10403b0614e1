import { ManifestNamingScheme, Properties } from './events';
import { ObjectId } from './ids';
import { VersionSet } from './table-versions';

export interface NamespaceState {
  id: ObjectId;
  properties: Properties;
  /** The principal whose request set the properties (a policy's author, such as an expiry's). */
  propertiesSetBy?: string;
}

export interface TableState {
  id: ObjectId;
  uuid: string;
  location: string;
  properties: Properties;
  /** The principal whose request set the properties (a policy's author, such as an expiry's). */
  propertiesSetBy?: string;
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
