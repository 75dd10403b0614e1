import type { ConnectionOptions } from 'bullmq';

/** Queue names shared by the API (producers) and the workers (processors). */
export const QUEUES = {
  indexBuilds: 'index-builds',
  queryAnalysis: 'query-analysis',
  tablePurges: 'table-purges',
  columnBackfills: 'column-backfills',
  viewRefreshes: 'view-refreshes',
  tableMaintenance: 'table-maintenance',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** What a worker needs to build one index: the rest is in the catalog, under the transaction. */
export interface IndexBuildJob {
  database: string;
  transactionId: string;
  table: string[];
  indexName: string;
  /** Absent: the main branch. */
  branch?: string;
}

/** What a worker needs to fill a computed column: the rest is in the catalog, under the transaction. */
export interface ColumnBackfillJob {
  database: string;
  transactionId: string;
  table: string[];
  column: string;
  /** Absent: the main branch. */
  branch?: string;
}

/** What a worker needs to refresh a materialized view: the rest is in the view's own definition. */
export interface ViewRefreshJob {
  database: string;
  transactionId: string;
  table: string[];
  sourceVersion?: number;
}

/** One maintenance job on one table line: the rest is in the catalog, under the transaction. */
export interface TableMaintenanceJob {
  database: string;
  transactionId: string;
  table: string[];
  kind: 'compact' | 'expire_versions' | 'optimize_indices';
  /** Absent: the main branch. */
  branch?: string;
  /** Expiry: `older_than_seconds` and/or `keep_last`. */
  options?: Record<string, number>;
}

/** Deletes a dropped table's files once its retention has passed: the rest is in the catalog's pending purge. */
export interface TablePurgeJob {
  database: string;
  tableUuid: string;
}

/** AnalyzeTableQueryPlan runs the query on a worker; the API waits for the answer. */
export interface QueryAnalysisJob {
  database: string;
  table: string[];
  version?: number;
  query: Record<string, unknown>;
}

/** A refusal travels back from a worker as JSON in the failure message, keeping its Lance code. */
export interface JobRefusal {
  code: number;
  error: string;
}

/** BullMQ connection options from a redis:// URL; requests fail fast while Redis is away. */
export function redisConnection(url: string): ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}
