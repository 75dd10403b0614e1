import { Queue } from 'bullmq';
import { TransactionJobQueue } from '@app/application';
import { ColumnBackfillJob, IndexBuildJob, QUEUES, TableMaintenanceJob, ViewRefreshJob, redisConnection } from '@app/jobs';
import { withTimeout } from './with-timeout';

const PING_TIMEOUT_MS = 1000;
/** How long a database must queue nothing for its count to start again from 1. */
const FAIRNESS_QUIET_SECONDS = 600;
/** BullMQ's largest priority. */
const LOWEST_PRIORITY = 2_097_152;
const COUNT_QUEUED = 'lanceCatalogCountQueued';
/** One more in the key's count, which lapses once nothing is added for ARGV[1] seconds. */
const COUNT_QUEUED_LUA = `local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return n`;

/**
 * The producer side of a queue whose jobs are catalog transactions (index builds, column
 * backfills): the transaction id is the job id. Fails fast while Redis is away instead of hanging.
 *
 * The queues are shared by every database, and workers take jobs in priority order: a job's
 * priority is how many jobs its database has queued since it last went ten minutes without queueing
 * one (the first 1), so a database that queues a hundred builds has its first run beside another
 * database's one build, and that one before the rest of the hundred, while each database's own
 * jobs keep their order (unless it queued nothing for ten minutes while some still waited).
 */
export class BullTransactionQueue<T extends { transactionId: string; database: string }> implements TransactionJobQueue<T> {
  readonly queue: Queue<T>;
  private counting = false;

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
    const priority = await withTimeout(this.queuedRecently(job.database), 5 * PING_TIMEOUT_MS);
    await withTimeout(
      // BullMQ's generic job-name types do not narrow for a generic T.
      (this.queue as unknown as Queue).add(this.jobName, job, {
        jobId: job.transactionId,
        priority,
        attempts: this.attempts,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: 1000,
        removeOnFail: 1000,
      }),
      5 * PING_TIMEOUT_MS,
    );
  }

  /** Counts the job among its database's queued ones, and answers its place there (1 for the first). */
  private async queuedRecently(database: string): Promise<number> {
    const client = await this.queue.getBackend().client;
    if (!this.counting) {
      client.defineCommand(COUNT_QUEUED, { numberOfKeys: 1, lua: COUNT_QUEUED_LUA });
      this.counting = true;
    }
    const count = Number(await client.runCommand(COUNT_QUEUED, [this.queue.toKey(`fair:${database}`), FAIRNESS_QUIET_SECONDS]));
    return Math.min(Math.max(1, count), LOWEST_PRIORITY);
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
