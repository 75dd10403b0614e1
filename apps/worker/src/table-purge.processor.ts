import { Processor } from '@nestjs/bullmq';
import { Inject, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Job } from 'bullmq';
import { PurgeService } from '@app/application';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { QUEUES, TablePurgeJob } from '@app/jobs';
import { isWait, runAttempt } from './unavailable-waits';
import { JobProcessor } from './job-processor';

/** How often a worker queues again every pending purge, for jobs Redis lost (it keeps none on disk, say). */
const SWEEP_MS = 10 * 60_000;

/**
 * Deletes dropped tables' files once their retention has passed (see PurgeService). An unavailable
 * object store or event store is waited out; a purge refused fails at once (the sweep queues it again).
 */
@Processor(QUEUES.tablePurges)
export class TablePurgeProcessor extends JobProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('table-purges');
  private timer?: NodeJS.Timeout;
  private interval?: NodeJS.Timeout;

  constructor(
    private readonly purges: PurgeService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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

  async process(job: Job<TablePurgeJob>, token?: string): Promise<string> {
    const { database, tableUuid } = job.data;
    const stop = this.metrics.jobSeconds.startTimer({ type: 'table-purge' });
    try {
      const { outcome, skipped } = await runAttempt(job, token, () => this.purges.purge(database, tableUuid), {
        settings: this.config.jobUnavailable,
        what: 'purging the dropped table',
        onWait: async (reason, _since, next) => this.logger.warn(`purging dropped table ${tableUuid} waits until ${next.toISOString()}: ${reason}`),
      });
      if (outcome === 'purged') this.logger.log(`purged the files of dropped table ${tableUuid} (database ${database})`);
      if (skipped) {
        const live = skipped.map((t) => `${t.table.join('.')} at ${t.location}`).join(', ');
        this.logger.warn(`kept the files of dropped table ${tableUuid} (database ${database}): live tables lie at, inside or around its location: ${live}`);
      }
      stop({ outcome: outcome.replace(/ /g, '-') });
      return outcome;
    } catch (e) {
      stop({ outcome: isWait(e) ? 'waiting' : 'failed' });
      if (!isWait(e)) this.logger.warn(`purging dropped table ${tableUuid} failed: ${(e as Error).message}`);
      throw e;
    }
  }
}
