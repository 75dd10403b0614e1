import { Queue } from 'bullmq';
import { IndexQueue } from '@app/application';
import { IndexBuildJob, QUEUES, redisConnection } from '@app/jobs';
import { withTimeout } from './with-timeout';

const PING_TIMEOUT_MS = 1000;

/** The producer side of the index-build queue. Fails fast while Redis is away instead of hanging. */
export class BullIndexQueue implements IndexQueue {
  readonly queue: Queue<IndexBuildJob>;

  constructor(redisUrl: string, prefix: string, private readonly attempts: number) {
    this.queue = new Queue<IndexBuildJob>(QUEUES.indexBuilds, {
      connection: { ...redisConnection(redisUrl), maxRetriesPerRequest: 1 },
      prefix,
    });
    this.queue.on('error', () => undefined);
  }

  async ping(): Promise<void> {
    await withTimeout(this.queue.count(), PING_TIMEOUT_MS);
  }

  async enqueue(job: IndexBuildJob): Promise<void> {
    await withTimeout(
      this.queue.add('build', job, {
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

