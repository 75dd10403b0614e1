import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { TableLine } from '@app/catalog';
import { BackfillService } from '@app/application';
import { ColumnBackfillJob, QUEUES } from '@app/jobs';
import { lockOptions, recordFailedAttempt, TransactionJob, workerContext } from './transaction-jobs';
import { TransactionJobProcessor } from './transaction-job-processor';

/**
 * Fills one computed column per job (AlterTableBackfillColumns), with Lance's refresh of the rows
 * that hold no value (see BackfillService.fill for the non-nullable inputs it declares nullable
 * while Lance fills), in the life every transaction's job lives (see runTransactionJob); the refresh
 * cannot be stopped once started, so a cancel during it leaves the rows it filled (they hold the
 * column's own expression) and the transaction Canceled.
 */
@Processor(QUEUES.columnBackfills, lockOptions())
export class ColumnBackfillProcessor extends TransactionJobProcessor<ColumnBackfillJob> {
  protected readonly logger = new Logger('column-backfills');

  constructor(private readonly backfills: BackfillService) {
    super();
  }

  process(job: Job<ColumnBackfillJob>, token?: string): Promise<string> {
    return this.attempt(job, token, 'column-backfill', 'filling the column', () => this.steps(job));
  }

  /** Made once the job's table is known under its name of now (see attempt). */
  private steps(job: Job<ColumnBackfillJob>): TransactionJob {
    const ctx = workerContext(job.data.database);
    const { transactionId, column, table, branch } = job.data;
    // The table as the last look at the transaction found it.
    let found: TableLine | undefined;
    return {
      status: async () => {
        const now = await this.backfills.jobOf(ctx, table, transactionId, branch);
        found = now.table;
        return now.status;
      },
      setStatus: (status, properties) => this.backfills.setStatus(ctx, transactionId, status, properties),
      work: async () => {
        this.logger.log(`column backfill started: '${column}' of ${table.join('/')} (transaction ${transactionId}, attempt ${job.attemptsMade + 1})`);
        const memory = {
          relaxed: job.data.relaxedInputs ?? [],
          remember: (columns: readonly string[]) => job.updateData({ ...job.data, relaxedInputs: [...columns] }),
        };
        const filled = await this.backfills.fill(ctx, found!, column, memory);
        if (filled.relaxed.length) {
          this.logger.log(`column backfill: input column(s) ${filled.relaxed.join(', ')} of ${table.join('/')} declared nullable for Lance's refresh and non-nullable again (transaction ${transactionId})`);
        }
        if (filled.leftNullable.length) {
          this.logger.warn(`column backfill: input column(s) ${filled.leftNullable.join(', ')} of ${table.join('/')} stay nullable: Lance would not declare them non-nullable again (transaction ${transactionId})`);
        }
        this.logger.log(`column backfill done: ${filled.rowsFilled} rows of '${column}' (transaction ${transactionId})`);
        return {
          rows_filled: String(filled.rowsFilled),
          table_version: String(filled.version),
          ...(filled.leftNullable.length ? { inputs_left_nullable: filled.leftNullable.join(',') } : {}),
        };
      },
    };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<ColumnBackfillJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'column backfill', (ctx, id, status, properties) => this.backfills.setStatus(ctx, id, status, properties));
  }
}
