import { Queue } from 'bullmq';
import { PurgeQueue } from '@app/application';
import { QUEUES, TablePurgeJob, redisConnection } from '@app/jobs';
import { withTimeout } from './with-timeout';

/** The producer side of the table-purge queue: delayed jobs, one per dropped table, kept by Redis across restarts. */
export class BullPurgeQueue implements PurgeQueue {
  readonly queue: Queue<TablePurgeJob>;

  constructor(redisUrl: string, prefix: string) {
    this.queue = new Queue<TablePurgeJob>(QUEUES.tablePurges, { connection: { ...redisConnection(redisUrl), maxRetriesPerRequest: 1 }, prefix });
    this.queue.on('error', () => undefined);
  }

  async enqueue(job: TablePurgeJob, delayMs: number): Promise<void> {
    const jobId = `purge-${job.database}-${job.tableUuid}`;
    // A job still waiting for its time keeps it; one that ran (and found the purge not due) is replaced.
    const existing = await withTimeout(this.queue.getJob(jobId), 5000);
    if (existing && (await existing.isDelayed().catch(() => false))) return;
    if (existing) await existing.remove().catch(() => undefined);
    await withTimeout(
      this.queue.add('purge', job, { jobId, delay: delayMs, attempts: 10, backoff: { type: 'exponential', delay: 5000 }, removeOnComplete: 1000, removeOnFail: 1000 }),
      5000,
    );
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
