import { Queue } from 'bullmq';
import { TransactionJobQueue } from '@app/application';
import { ColumnBackfillJob, IndexBuildJob, QUEUES, TableMaintenanceJob, ViewRefreshJob, redisConnection } from '@app/jobs';
import { withTimeout } from './with-timeout';

const PING_TIMEOUT_MS = 1000;

/**
 * The producer side of a queue whose jobs are catalog transactions (index builds, column
 * backfills): the transaction id is the job id. Fails fast while Redis is away instead of hanging.
 */
export class BullTransactionQueue<T extends { transactionId: string }> implements TransactionJobQueue<T> {
  readonly queue: Queue<T>;

  constructor(
    name: string,
    private readonly jobName: string,
    redisUrl: string,
    prefix: string,
    private readonly attempts: number,
  ) {
    this.queue = new Queue<T>(name, { connection: { ...redisConnection(redisUrl), maxRetriesPerRequest: 1 }, prefix });
    this.queue.on('error', () => undefined);
  }

  async ping(): Promise<void> {
    await withTimeout(this.queue.count(), PING_TIMEOUT_MS);
  }

  async enqueue(job: T): Promise<void> {
    await withTimeout(
      // BullMQ's generic job-name types do not narrow for a generic T.
      (this.queue as unknown as Queue).add(this.jobName, job, {
        jobId: job.transactionId,
        attempts: this.attempts,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: 1000,
        removeOnFail: 1000,
      }),
      5 * PING_TIMEOUT_MS,
    );
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

export class BullIndexQueue extends BullTransactionQueue<IndexBuildJob> {
  constructor(redisUrl: string, prefix: string, attempts: number) {
    super(QUEUES.indexBuilds, 'build', redisUrl, prefix, attempts);
  }
}

export class BullBackfillQueue extends BullTransactionQueue<ColumnBackfillJob> {
  constructor(redisUrl: string, prefix: string, attempts: number) {
    super(QUEUES.columnBackfills, 'backfill', redisUrl, prefix, attempts);
  }
}

export class BullViewRefreshQueue extends BullTransactionQueue<ViewRefreshJob> {
  constructor(redisUrl: string, prefix: string, attempts: number) {
    super(QUEUES.viewRefreshes, 'refresh', redisUrl, prefix, attempts);
  }
}

export class BullMaintenanceQueue extends BullTransactionQueue<TableMaintenanceJob> {
  constructor(redisUrl: string, prefix: string, attempts: number) {
    super(QUEUES.tableMaintenance, 'maintain', redisUrl, prefix, attempts);
  }
}
