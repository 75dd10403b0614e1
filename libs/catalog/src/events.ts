import { GrantFact } from './grants';
import { ObjectId } from './ids';
import { WebhookSubscriptionSpec } from './webhook-subscriptions';

export type Properties = Record<string, string>;

export type ManifestNamingScheme = 'V1' | 'V2';

/** One committed manifest of a table, as the catalog records it. */
export interface VersionRecord {
  version: number;
  /** The final manifest path, in the object-store form the client uses (no scheme, no leading slash). */
  manifestPath: string;
  manifestSize?: number;
  eTag?: string;
  namingScheme: ManifestNamingScheme;
  timestampMillis: number;
  metadata?: Properties;
  /**
   * On an object store, whose copies cannot be put-if-absent, the copy to the final name is made
   * only once the version is recorded: the staging manifest it is made from (store form) and the
   * entity tag its check read, so any process can make it if the recording one ended first.
   */
  stagingManifest?: { path: string; eTag?: string };
}

/** The maintenance jobs a table line can get: each one transaction on the `table-maintenance` queue. */
export type MaintenanceKind = 'compact' | 'expire_versions' | 'optimize_indices';

export type TransactionStatus = 'Queued' | 'Running' | 'Succeeded' | 'Failed' | 'Canceled';

interface TableOfEvent {
  table: ObjectId;
  tableUuid: string;
}

/** Every catalog fact, in the protocol's own words. Data fields are plain JSON. */
/** A live table's location, named where work on files left it alone. */
export interface LiveLocation {
  table: ObjectId;
  location: string;
}

export type CatalogEvent =
  | { type: 'NamespaceCreated'; data: { namespace: ObjectId; properties: Properties } }
  | { type: 'NamespaceDropped'; data: { namespace: ObjectId } }
  | {
      type: 'TableDeclared';
      data: TableOfEvent & { location: string; properties: Properties; managedVersioning: boolean };
    }
  | {
      type: 'TableRegistered';
      data: TableOfEvent & {
        location: string;
        properties: Properties;
        managedVersioning: boolean;
        versions: VersionRecord[];
      };
    }
  | { type: 'TableDropped'; data: TableOfEvent & { location: string } }
  | { type: 'TableDeregistered'; data: TableOfEvent & { location: string } }
  /** A dropped table's files are to be deleted once `purgeAfterMillis` (ms since the epoch) has passed. */
  | { type: 'TablePurgeScheduled'; data: TableOfEvent & { location: string; purgeAfterMillis: number } }
  /**
   * A dropped table's files are gone. `skipped`: live tables whose locations lie inside or around
   * the dropped table's (a log from before such locations were refused may hold them), so nothing
   * was deleted and the files are left where they are.
   */
  | { type: 'TablePurged'; data: TableOfEvent & { location: string; files: number; skipped?: LiveLocation[] } }
  /** The location was registered again before its purge (how a dropped table is brought back). */
  | { type: 'TablePurgeCanceled'; data: TableOfEvent & { location: string; reason: string } }
  | { type: 'TableRenamed'; data: TableOfEvent & { newTable: ObjectId } }
  /** `branch` absent: the main branch. */
  | { type: 'TableVersionCreated'; data: TableOfEvent & VersionRecord & { branch?: string } }
  /**
   * `reason`: why versions went without a DeleteTableVersions call: their manifests were found gone
   * from storage, or a maintenance job expired them (`transactionId`: that job's transaction).
   */
  | { type: 'TableVersionsDeleted'; data: TableOfEvent & { versions: number[]; branch?: string; reason?: string; transactionId?: string } }
  /**
   * A branch of the table, started from `parentVersion` of `parentBranch` (absent: main).
   * `recordedBy: 'commit'`: first seen as a client's commit on it, whose parent branch only Lance's
   * ref file names (see BranchState).
   */
  | {
      type: 'TableBranchCreated';
      data: TableOfEvent & {
        branch: string;
        parentBranch?: string;
        parentVersion: number;
        createdAtMillis: number;
        recordedBy: 'CreateTableBranch' | 'commit';
      };
    }
  /** `reason`: set when the catalog found the branch's files already removed by a client. */
  | { type: 'TableBranchDeleted'; data: TableOfEvent & { branch: string; reason?: string } }
  | { type: 'TableRestored'; data: TableOfEvent & { fromVersion: number; version?: number; branch?: string } }
  | {
      type: 'TableIndexRequested';
      data: TableOfEvent & { indexName: string; columns: string[]; indexType: string; params: Record<string, unknown>; branch?: string };
    }
  | {
      type: 'TableTagChanged';
      data: TableOfEvent & { tag: string; change: 'created' | 'updated' | 'deleted'; version?: number; branch?: string };
    }
  /** A worker is to fill the rows of a computed column that hold no value yet (AlterTableBackfillColumns). */
  /** A maintenance job (see maintenance.ts) asked for by a caller or by the workers' planner; its transaction starts Queued. */
  | { type: 'TableMaintenanceRequested'; data: TableOfEvent & { kind: MaintenanceKind; branch?: string; requestedBy: 'request' | 'planner'; options?: Record<string, number> } }
  /**
   * `options`: the request's options that describe how a distributed job is run (concurrency,
   * checkpoints, cluster, manifest...), kept as the job's transaction properties: one worker job
   * runs it whole, so they change nothing but are answered as asked.
   */
  | { type: 'TableBackfillRequested'; data: TableOfEvent & { column: string; branch?: string; options?: Properties } }
  /** A worker is to refresh a materialized view from its source (RefreshMaterializedView); `options` as a backfill's. */
  | { type: 'MaterializedViewRefreshRequested'; data: TableOfEvent & { sourceVersion?: number; options?: Properties } }
  | { type: 'TableIndexDropped'; data: TableOfEvent & { indexName: string; branch?: string } }
  /** `properties`: set on the table by the write (UpdateTable's `properties`), over those it had. */
  | { type: 'TableDataChanged'; data: TableOfEvent & { operation: string; version: number; rows?: number; branch?: string; properties?: Properties } }
  /** A grantee gets a level on a securable (and everything below it). Who and when: the metadata's. */
  | { type: 'GrantIssued'; data: GrantFact }
  /** That exact grant (grantee, securable, level) no longer holds. */
  | { type: 'GrantRevoked'; data: GrantFact }
  /** An admin subscribed a URL to the database's change feed (its signing secret is derived, never recorded). */
  | { type: 'WebhookSubscriptionCreated'; data: WebhookSubscriptionSpec }
  | { type: 'WebhookSubscriptionDeleted'; data: { subscriptionId: string } }
  /** Its receiver failed for longer than the server gives one; `revision` is the event it could not deliver. */
  | { type: 'WebhookSubscriptionPaused'; data: { subscriptionId: string; reason: string; revision: number } }
  | {
      type: 'TransactionAltered';
      data: {
        transactionId: string;
        status?: TransactionStatus;
        setProperties: Properties;
        unsetProperties: string[];
        /** Set when a caller altered it (AlterTransaction), not the server: the keys it set are the caller's. */
        byCaller?: true;
        /** The table of the job whose transaction this is (queued work), so that its progress is news of that table. */
        table?: ObjectId;
      };
    };

export type CatalogEventType = CatalogEvent['type'];

/** What the application adds around an event when it appends it. */
export interface EventMetadata {
  transactionId: string;
  operation: string;
  occurredAt: string;
  context?: Properties;
  principal?: string;
}

export interface CatalogEnvelope {
  event: CatalogEvent;
  metadata: EventMetadata;
  /** Revision of the event in its database stream. */
  revision: number;
}

export const CATALOG_EVENT_TYPES: readonly CatalogEventType[] = [
  'NamespaceCreated',
  'NamespaceDropped',
  'TableDeclared',
  'TableRegistered',
  'TableDropped',
  'TableDeregistered',
  'TablePurgeScheduled',
  'TablePurged',
  'TablePurgeCanceled',
  'TableRenamed',
  'TableVersionCreated',
  'TableVersionsDeleted',
  'TableMaintenanceRequested',
  'TableBranchCreated',
  'TableBranchDeleted',
  'TableRestored',
  'TableDataChanged',
  'TableIndexRequested',
  'TableIndexDropped',
  'TableTagChanged',
  'TableBackfillRequested',
  'MaterializedViewRefreshRequested',
  'TransactionAltered',
  'GrantIssued',
  'GrantRevoked',
  'WebhookSubscriptionCreated',
  'WebhookSubscriptionDeleted',
  'WebhookSubscriptionPaused',
];
