import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { TableState } from '@app/catalog';
import { MaterializedViewService } from '@app/application';
import { QUEUES, ViewRefreshJob } from '@app/jobs';
import { lockOptions, recordFailedAttempt, TransactionJob, workerContext } from './transaction-jobs';
import { TransactionJobProcessor } from './transaction-job-processor';

/**
 * Refreshes one materialized view per job (RefreshMaterializedView), with lancedb's own refresh:
 * incremental when the source's changes allow it, else a rebuild. Its transaction lives the life
 * every transaction's job lives (see runTransactionJob).
 */
@Processor(QUEUES.viewRefreshes, lockOptions())
export class ViewRefreshProcessor extends TransactionJobProcessor<ViewRefreshJob> {
  protected readonly logger = new Logger('view-refreshes');

  constructor(private readonly views: MaterializedViewService) {
    super();
  }

  process(job: Job<ViewRefreshJob>, token?: string): Promise<string> {
    return this.attempt(job, token, 'view-refresh', 'refreshing the view', () => this.steps(job));
  }

  /** Made once the job's table is known under its name of now (see attempt). */
  private steps(job: Job<ViewRefreshJob>): TransactionJob {
    const ctx = workerContext(job.data.database);
    const { transactionId, table } = job.data;
    // The table as the last look at the transaction found it.
    let found: TableState | undefined;
    return {
      status: async () => {
        const now = await this.views.jobOf(ctx, table, transactionId);
        found = now.table;
        return now.status;
      },
      setStatus: (status, properties) => this.views.setStatus(ctx, transactionId, status, properties),
      work: async () => {
        const done = await this.views.refresh(ctx, found!, job.data.definition, job.data.sourceVersion);
        this.logger.log(`view refresh done: ${table.join('/')} ${done.mode}, ${done.rowsWritten} rows (transaction ${transactionId})`);
        return { mode: done.mode, rows_written: String(done.rowsWritten), source_version: String(done.sourceVersion), view_version: String(done.version) };
      },
    };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<ViewRefreshJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'view refresh', (ctx, id, status, properties) => this.views.setStatus(ctx, id, status, properties));
  }
}
