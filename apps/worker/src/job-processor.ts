import { OnWorkerEvent, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown } from '@nestjs/common';
import { redisAnswers } from '@app/jobs';
import { logQueueError } from './redis-errors';

/** What every processor shares: its worker's errors logged (see logQueueError), and a shutdown that does not wait on a Redis that is away. */
export abstract class JobProcessor extends WorkerHost implements BeforeApplicationShutdown {
  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    logQueueError(this.worker.name, error);
  }

  /**
   * BullMQ's close waits for the worker's fetch loop, which never ends while Redis is away: then the
   * worker is closed at once (a job it held is taken over by another worker once its lock lapses).
   * With Redis there, the close that follows waits for running jobs as usual.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!(await redisAnswers(this.worker.opts.connection))) await this.worker.close(true);
  }
}
