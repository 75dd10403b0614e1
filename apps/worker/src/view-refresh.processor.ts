import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/core';
import { Job, UnrecoverableError } from 'bullmq';
import { CatalogError, ErrorCode } from '@app/catalog';
import { MaterializedViewService } from '@app/application';
import { QUEUES, ViewRefreshJob } from '@app/jobs';
import { FINAL_STATUSES, exhausted, lockOptions, timedJob, workerContext } from './transaction-jobs';

/**
 * Refreshes one materialized view per job (RefreshMaterializedView), with lancedb's own refresh:
 * incremental when the source's changes allow it, else a rebuild. The transaction's life is an
 * index build's: skipped when canceled before it starts, Failed after the last attempt.
 */
@Processor(QUEUES.viewRefreshes, lockOptions())
export class ViewRefreshProcessor extends WorkerHost implements OnModuleInit {
  private readonly logger = new Logger('view-refreshes');

  constructor(
    private readonly views: MaterializedViewService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  process(job: Job<ViewRefreshJob>): Promise<string> {
    return timedJob(this.metrics, 'view-refresh', () => this.refresh(job));
  }

  private async refresh(job: Job<ViewRefreshJob>): Promise<string> {
    const ctx = workerContext(job.data.database);
    const { transactionId } = job.data;
    const before = await this.views.jobOf(ctx, job.data.table, transactionId).catch((e) => {
      throw new UnrecoverableError(`the view or its transaction is gone: ${(e as Error).message}`);
    });
    if (FINAL_STATUSES.has(before.status)) return `skipped: transaction is ${before.status}`;
    await this.views.setStatus(ctx, transactionId, 'Running', { started_at: new Date().toISOString(), attempt: String(job.attemptsMade + 1) });
    let done: { mode: string; rowsWritten: number; sourceVersion: number; version: number };
    try {
      done = await this.views.refresh(ctx, before.table, job.data.sourceVersion);
    } catch (e) {
      if (e instanceof CatalogError && e.code !== ErrorCode.ServiceUnavailable) throw new UnrecoverableError(e.message);
      if (e instanceof Error && /invalid input|not found|schema error|stable row id/i.test(e.message)) throw new UnrecoverableError(e.message);
      throw e;
    }
    const outcome = { mode: done.mode, rows_written: String(done.rowsWritten), source_version: String(done.sourceVersion), view_version: String(done.version) };
    const after = await this.views.jobOf(ctx, job.data.table, transactionId);
    const status = after.status === 'Canceled' ? 'Canceled' : 'Succeeded';
    await this.views.setStatus(ctx, transactionId, status, { ...outcome, finished_at: new Date().toISOString() });
    this.logger.log(`view refresh ${status.toLowerCase()}: ${job.data.table.join('/')} ${done.mode}, ${done.rowsWritten} rows (transaction ${transactionId})`);
    return status === 'Canceled' ? 'canceled: the refresh had already been written' : 'refreshed';
  }

  @OnWorkerEvent('failed')
  async onFailed(job: Job<ViewRefreshJob> | undefined, error: Error): Promise<void> {
    if (!job) return;
    this.logger.warn(`view refresh ${job.data.transactionId} attempt ${job.attemptsMade} failed: ${error.message}`);
    if (!exhausted(job, error)) return;
    await this.views
      .setStatus(workerContext(job.data.database), job.data.transactionId, 'Failed', { reason: error.message.slice(0, 1000), finished_at: new Date().toISOString() })
      .catch((e) => this.logger.warn(`could not mark ${job.data.transactionId} failed: ${(e as Error).message}`));
  }
}
