import { IndexBuildJob } from '@app/jobs';

/** Where index builds wait for a worker. The BullMQ implementation lives with the Nest wiring. */
export interface IndexQueue {
  /** Throws when the queue cannot be reached. */
  ping(): Promise<void>;
  /** Idempotent: the transaction id is the job id. */
  enqueue(job: IndexBuildJob): Promise<void>;
}
