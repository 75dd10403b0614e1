import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { Job } from 'bullmq';
import { TableLine } from '@app/catalog';
import { BackfillService, TransactionService } from '@app/application';
import { ColumnBackfillJob, QUEUES } from '@app/jobs';
import { lockOptions, recordFailedAttempt, TransactionJob, runTransactionJob, timedJob, transactionAttempts, workerContext } from './transaction-jobs';
import { runAttempt } from './unavailable-waits';
import { JobProcessor } from './job-processor';

/**
 * Fills one computed column per job (AlterTableBackfillColumns), with Lance's refresh of the rows
 * that hold no value, in the life every transaction's job lives (see runTransactionJob); the refresh
 * cannot be stopped once started, so a cancel during it leaves the rows it filled (they hold the
 * column's own expression) and the transaction Canceled.
 */
@Processor(QUEUES.columnBackfills, lockOptions())
export class ColumnBackfillProcessor extends JobProcessor implements OnModuleInit {
  private readonly logger = new Logger('column-backfills');

  constructor(
    private readonly backfills: BackfillService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly transactions: TransactionService,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  process(job: Job<ColumnBackfillJob>, token?: string): Promise<string> {
    const ctx = workerContext(job.data.database);
    const { transactionId, column, table, branch } = job.data;
    // The table as the last look at the transaction found it.
    let found: TableLine | undefined;
    const attempts = transactionAttempts(job, 'filling the column', this.config, this.transactions, this.logger);
    const steps: TransactionJob = {
      status: async () => {
        const now = await this.backfills.jobOf(ctx, table, transactionId, branch);
        found = now.table;
        return now.status;
      },
      setStatus: (status, properties) => this.backfills.setStatus(ctx, transactionId, status, properties),
      work: async () => {
        this.logger.log(`column backfill started: '${column}' of ${table.join('/')} (transaction ${transactionId}, attempt ${job.attemptsMade + 1})`);
        const filled = await this.backfills.fill(ctx, found!, column);
        this.logger.log(`column backfill done: ${filled.rowsFilled} rows of '${column}' (transaction ${transactionId})`);
        return { rows_filled: String(filled.rowsFilled), table_version: String(filled.version) };
      },
    };
    return timedJob(this.metrics, 'column-backfill', () => runAttempt(job, token, () => runTransactionJob(job, steps), attempts));
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<ColumnBackfillJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'column backfill', (ctx, id, status, properties) => this.backfills.setStatus(ctx, id, status, properties));
  }
}
