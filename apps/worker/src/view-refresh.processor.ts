import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { Job } from 'bullmq';
import { TableState } from '@app/catalog';
import { MaterializedViewService, TransactionService } from '@app/application';
import { QUEUES, ViewRefreshJob } from '@app/jobs';
import { lockOptions, recordFailedAttempt, TransactionJob, runTransactionJob, timedJob, transactionAttempts, workerContext } from './transaction-jobs';
import { runAttempt } from './unavailable-waits';
import { JobProcessor } from './job-processor';

/**
 * Refreshes one materialized view per job (RefreshMaterializedView), with lancedb's own refresh:
 * incremental when the source's changes allow it, else a rebuild. Its transaction lives the life
 * every transaction's job lives (see runTransactionJob).
 */
@Processor(QUEUES.viewRefreshes, lockOptions())
export class ViewRefreshProcessor extends JobProcessor implements OnModuleInit {
  private readonly logger = new Logger('view-refreshes');

  constructor(
    private readonly views: MaterializedViewService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly transactions: TransactionService,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  process(job: Job<ViewRefreshJob>, token?: string): Promise<string> {
    const ctx = workerContext(job.data.database);
    const { transactionId, table } = job.data;
    // The table as the last look at the transaction found it.
    let found: TableState | undefined;
    const attempts = transactionAttempts(job, 'refreshing the view', this.config, this.transactions, this.logger);
    const steps: TransactionJob = {
      status: async () => {
        const now = await this.views.jobOf(ctx, table, transactionId);
        found = now.table;
        return now.status;
      },
      setStatus: (status, properties) => this.views.setStatus(ctx, transactionId, status, properties),
      work: async () => {
        const done = await this.views.refresh(ctx, found!, job.data.sourceVersion);
        this.logger.log(`view refresh done: ${table.join('/')} ${done.mode}, ${done.rowsWritten} rows (transaction ${transactionId})`);
        return { mode: done.mode, rows_written: String(done.rowsWritten), source_version: String(done.sourceVersion), view_version: String(done.version) };
      },
    };
    return timedJob(this.metrics, 'view-refresh', () => runAttempt(job, token, () => runTransactionJob(job, steps), attempts));
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<ViewRefreshJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'view refresh', (ctx, id, status, properties) => this.views.setStatus(ctx, id, status, properties));
  }
}
