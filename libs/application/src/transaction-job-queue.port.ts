import { ColumnBackfillJob, IndexBuildJob, ViewRefreshJob } from '@app/jobs';

/** Where a transaction's asynchronous work waits for a worker. The BullMQ implementation lives with the Nest wiring. */
export interface TransactionJobQueue<T> {
  /** Throws when the queue cannot be reached. */
  ping(): Promise<void>;
  /** Idempotent: the transaction id is the job id. */
  enqueue(job: T): Promise<void>;
}

export type IndexQueue = TransactionJobQueue<IndexBuildJob>;
export type BackfillQueue = TransactionJobQueue<ColumnBackfillJob>;
export type ViewRefreshQueue = TransactionJobQueue<ViewRefreshJob>;
