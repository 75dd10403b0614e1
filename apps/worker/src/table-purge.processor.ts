import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Job } from 'bullmq';
import { PurgeService } from '@app/application';
import { Metrics } from '@app/nest-wiring';
import { QUEUES, TablePurgeJob } from '@app/jobs';

/** How often a worker queues again every pending purge, for jobs Redis lost (it keeps none on disk, say). */
const SWEEP_MS = 10 * 60_000;

/** Deletes dropped tables' files once their retention has passed (see PurgeService). */
@Processor(QUEUES.tablePurges)
export class TablePurgeProcessor extends WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('table-purges');
  private timer?: NodeJS.Timeout;
  private interval?: NodeJS.Timeout;

  constructor(
    private readonly purges: PurgeService,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    const sweep = () =>
      void this.purges.sweep().then(
        (queued) => queued && this.logger.log(`sweep: ${queued} pending purge(s) queued`),
        (e) => this.logger.warn(`sweep failed (tried again in ${SWEEP_MS / 60_000} min): ${(e as Error).message}`),
      );
    this.timer = setTimeout(sweep, 2000);
    this.timer.unref();
    this.interval = setInterval(sweep, SWEEP_MS);
    this.interval.unref();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
    clearInterval(this.interval);
  }

  async process(job: Job<TablePurgeJob>): Promise<string> {
    const stop = this.metrics.jobSeconds.startTimer({ type: 'table-purge' });
    try {
      const { outcome, skipped } = await this.purges.purge(job.data.database, job.data.tableUuid);
      if (outcome === 'purged') this.logger.log(`purged the files of dropped table ${job.data.tableUuid} (database ${job.data.database})`);
      if (skipped) {
        const live = skipped.map((t) => `${t.table.join('.')} at ${t.location}`).join(', ');
        this.logger.warn(`kept the files of dropped table ${job.data.tableUuid} (database ${job.data.database}): live tables lie at, inside or around its location: ${live}`);
      }
      stop({ outcome: outcome.replace(/ /g, '-') });
      return outcome;
    } catch (e) {
      stop({ outcome: 'failed' });
      this.logger.warn(`purging dropped table ${job.data.tableUuid} failed (retried): ${(e as Error).message}`);
      throw e;
    }
  }
}
