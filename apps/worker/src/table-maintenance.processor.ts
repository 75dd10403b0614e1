import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { Job } from 'bullmq';
import { TableLine, TableState } from '@app/catalog';
import { MaintenanceService, TransactionService } from '@app/application';
import { QUEUES, TableMaintenanceJob } from '@app/jobs';
import { JobProcessor } from './job-processor';
import { TransactionJob, lockOptions, recordFailedAttempt, runTransactionJob, timedJob, transactionAttempts, workerContext } from './transaction-jobs';
import { runAttempt } from './unavailable-waits';

/**
 * Runs one maintenance job (compaction, version expiry, index optimisation) per table line at a
 * time, in the life every transaction's job lives (see runTransactionJob): Lance's work cannot be
 * stopped once begun, so a cancel during it leaves what it committed and the transaction Canceled.
 */
@Processor(QUEUES.tableMaintenance, lockOptions())
export class TableMaintenanceProcessor extends JobProcessor implements OnModuleInit {
  private readonly logger = new Logger('table-maintenance');

  constructor(
    private readonly maintenance: MaintenanceService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly transactions: TransactionService,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  process(job: Job<TableMaintenanceJob>, token?: string): Promise<string> {
    const ctx = workerContext(job.data.database);
    const { transactionId, table, branch, kind, options } = job.data;
    let found: TableLine | undefined;
    let whole: TableState | undefined;
    const attempts = transactionAttempts(job, `the ${kind.replace('_', ' ')} job`, this.config, this.transactions, this.logger);
    const steps: TransactionJob = {
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
    return timedJob(this.metrics, `maintenance-${kind}`, () => runAttempt(job, token, () => runTransactionJob(job, steps), attempts));
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<TableMaintenanceJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'maintenance', (ctx, id, status, properties) => this.maintenance.setStatus(ctx, id, status, properties));
  }
}
