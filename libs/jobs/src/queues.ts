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

/**
 * A job waiting out an unavailable service: since when (epoch ms) and how many waits so far. Kept in
 * the job's data, so whichever worker takes the job next goes on with the same wait.
 */
export interface UnavailableWait {
  since: number;
  waits: number;
}

/** Every job may be waiting for a service. */
export interface WaitingJob {
  waiting?: UnavailableWait;
}

/** What a worker needs to build one index: the rest is in the catalog, under the transaction. */
export interface IndexBuildJob extends WaitingJob {
  database: string;
  transactionId: string;
  table: string[];
  indexName: string;
  /** Absent: the main branch. */
  branch?: string;
}

/** What a worker needs to fill a computed column: the rest is in the catalog, under the transaction. */
export interface ColumnBackfillJob extends WaitingJob {
  database: string;
  transactionId: string;
  table: string[];
  column: string;
  /** Absent: the main branch. */
  branch?: string;
  /** Input columns an attempt declared nullable for Lance's refresh, to be declared non-nullable again (BackfillService.fill). */
  relaxedInputs?: string[];
}

/** What a worker needs to refresh a materialized view: the rest is in the view's own definition. */
export interface ViewRefreshJob extends WaitingJob {
  database: string;
  transactionId: string;
  table: string[];
  sourceVersion?: number;
  /** The SHA-256 of the view's definition as judged when the refresh was requested: the only one it refreshes from. */
  definition?: string;
}

/** One maintenance job on one table line: the rest is in the catalog, under the transaction. */
export interface TableMaintenanceJob extends WaitingJob {
  database: string;
  transactionId: string;
  table: string[];
  kind: 'compact' | 'expire_versions' | 'optimize_indices';
  /** Absent: the main branch. */
  branch?: string;
  /** Expiry: `older_than_seconds` and/or `keep_last`. */
  options?: Record<string, number>;
  /** Whose request (or policy, for the planner's) the job does: its events name them. */
  principal?: string;
}

/** Deletes a dropped table's files once its retention has passed: the rest is in the catalog's pending purge. */
export interface TablePurgeJob extends WaitingJob {
  database: string;
  tableUuid: string;
}

/** AnalyzeTableQueryPlan runs the query on a worker; the API waits for the answer. */
export interface QueryAnalysisJob extends WaitingJob {
  database: string;
  table: string[];
  version?: number;
  query: Record<string, unknown>;
  /** When (epoch ms) the API stops waiting for the answer: no attempt starts after it. */
  answerBy?: number;
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
