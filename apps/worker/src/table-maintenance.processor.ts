import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { TableLine, TableState } from '@app/catalog';
import { MaintenanceService } from '@app/application';
import { QUEUES, TableMaintenanceJob } from '@app/jobs';
import { TransactionJob, lockOptions, recordFailedAttempt, workerContext } from './transaction-jobs';
import { TransactionJobProcessor } from './transaction-job-processor';

/**
 * Runs one maintenance job (compaction, version expiry, index optimisation) per table line at a
 * time, in the life every transaction's job lives (see runTransactionJob): Lance's work cannot be
 * stopped once begun, so a cancel during it leaves what it committed and the transaction Canceled.
 */
@Processor(QUEUES.tableMaintenance, lockOptions())
export class TableMaintenanceProcessor extends TransactionJobProcessor<TableMaintenanceJob> {
  protected readonly logger = new Logger('table-maintenance');

  constructor(private readonly maintenance: MaintenanceService) {
    super();
  }

  process(job: Job<TableMaintenanceJob>, token?: string): Promise<string> {
    const { kind } = job.data;
    return this.attempt(job, token, `maintenance-${kind}`, `the ${kind.replace('_', ' ')} job`, () => this.steps(job));
  }

  /** Made once the job's table is known under its name of now (see attempt). */
  private steps(job: Job<TableMaintenanceJob>): TransactionJob {
    const ctx = { ...workerContext(job.data.database), ...(job.data.principal !== undefined ? { principal: job.data.principal } : {}) };
    const { transactionId, table, branch, kind, options } = job.data;
    let found: TableLine | undefined;
    let whole: TableState | undefined;
    return {
      status: async () => {
        const now = await this.maintenance.jobOf(ctx, table, transactionId, branch);
        found = now.table;
        whole = now.whole;
        return now.status;
      },
      setStatus: (status, properties) => this.maintenance.setStatus(ctx, transactionId, status, properties),
      work: async () => {
        this.logger.log(`${kind} started on ${table.join('/')}${branch ? ` (branch ${branch})` : ''} (transaction ${transactionId}, attempt ${job.attemptsMade + 1})`);
        const figures =
          kind === 'compact'
            ? await this.maintenance.compact(ctx, found!)
            : kind === 'optimize_indices'
              ? await this.maintenance.optimizeIndices(ctx, found!, whole!)
              : await this.maintenance.expire(ctx, found!, transactionId, { olderThanSeconds: options?.older_than_seconds, keepLast: options?.keep_last });
        this.logger.log(`${kind} done on ${table.join('/')} (transaction ${transactionId}): ${JSON.stringify(figures)}`);
        return figures;
      },
    };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<TableMaintenanceJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'maintenance', (ctx, id, status, properties) => this.maintenance.setStatus(ctx, id, status, properties));
  }
}
