import { TablePurgeJob } from '@app/jobs';

/** Where purges of dropped tables wait for their time. The BullMQ implementation lives with the Nest wiring. */
export interface PurgeQueue {
  /** Idempotent per table: the table's uuid names the job. Throws when the queue cannot be reached. */
  enqueue(job: TablePurgeJob, delayMs: number): Promise<void>;
}
