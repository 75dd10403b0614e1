import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/core';
import { Job, UnrecoverableError } from 'bullmq';
import { CatalogError, ErrorCode } from '@app/catalog';
import { BackfillService } from '@app/application';
import { ColumnBackfillJob, QUEUES } from '@app/jobs';
import { FINAL_STATUSES, exhausted, lockOptions, timedJob, workerContext } from './transaction-jobs';

/**
 * Fills one computed column per job (AlterTableBackfillColumns). As for index builds, the
 * transaction is the source of truth: a canceled or finished one is skipped, a crash leaves the job
 * to BullMQ's stalled-job retry, and the last failed attempt marks the transaction Failed. Lance's
 * refresh cannot be stopped once started: a cancel that comes during it leaves the rows it filled
 * (they hold the column's own expression) and the transaction Canceled.
 */
@Processor(QUEUES.columnBackfills, lockOptions())
export class ColumnBackfillProcessor extends WorkerHost implements OnModuleInit {
  private readonly logger = new Logger('column-backfills');

  constructor(
    private readonly backfills: BackfillService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  process(job: Job<ColumnBackfillJob>): Promise<string> {
    return timedJob(this.metrics, 'column-backfill', () => this.fill(job));
  }

  private async fill(job: Job<ColumnBackfillJob>): Promise<string> {
    const ctx = workerContext(job.data.database);
    const { transactionId, column } = job.data;
    const before = await this.backfills.jobOf(ctx, job.data.table, transactionId).catch((e) => {
      throw new UnrecoverableError(`the backfill's table or transaction is gone: ${(e as Error).message}`);
    });
    if (FINAL_STATUSES.has(before.status)) return `skipped: transaction is ${before.status}`;
    await this.backfills.setStatus(ctx, transactionId, 'Running', { started_at: new Date().toISOString(), attempt: String(job.attemptsMade + 1) });
    this.logger.log(`column backfill started: '${column}' of ${job.data.table.join('/')} (transaction ${transactionId}, attempt ${job.attemptsMade + 1})`);
    let filled: { rowsFilled: number; version: number };
    try {
      filled = await this.backfills.fill(ctx, before.table, column);
    } catch (e) {
      if (e instanceof CatalogError && e.code !== ErrorCode.ServiceUnavailable) throw new UnrecoverableError(e.message);
      if (e instanceof Error && /invalid input|not computed|not found|schema error/i.test(e.message)) throw new UnrecoverableError(e.message);
      throw e;
    }
    const progress = { rows_filled: String(filled.rowsFilled), table_version: String(filled.version) };
    const after = await this.backfills.jobOf(ctx, job.data.table, transactionId);
    if (after.status === 'Canceled') {
      await this.backfills.setStatus(ctx, transactionId, 'Canceled', { ...progress, finished_at: new Date().toISOString() }).catch(() => undefined);
      return 'canceled: the rows filled before the cancel stay';
    }
    await this.backfills.setStatus(ctx, transactionId, 'Succeeded', { ...progress, finished_at: new Date().toISOString() });
    this.logger.log(`column backfill succeeded: ${filled.rowsFilled} rows of '${column}' (transaction ${transactionId})`);
    return 'filled';
  }

  @OnWorkerEvent('failed')
  async onFailed(job: Job<ColumnBackfillJob> | undefined, error: Error): Promise<void> {
    if (!job) return;
    this.logger.warn(`column backfill ${job.data.transactionId} attempt ${job.attemptsMade} failed: ${error.message}`);
    if (!exhausted(job, error)) return;
    await this.backfills
      .setStatus(workerContext(job.data.database), job.data.transactionId, 'Failed', { reason: error.message.slice(0, 1000), finished_at: new Date().toISOString() })
      .catch((e) => this.logger.warn(`could not mark ${job.data.transactionId} failed: ${(e as Error).message}`));
  }
}
