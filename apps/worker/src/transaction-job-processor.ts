import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { TransactionService } from '@app/application';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { WaitingJob } from '@app/jobs';
import { Job } from 'bullmq';
import { JobProcessor } from './job-processor';
import { TransactionJob, runTransactionJob, timedJob, transactionAttempts, workerContext } from './transaction-jobs';
import { runAttempt } from './unavailable-waits';

type TransactionJobData = WaitingJob & { database: string; transactionId: string; table?: string[] };

/**
 * A processor whose every job is a transaction's (index builds, backfills, view refreshes,
 * maintenance): the worker's concurrency from the configuration, and each attempt timed, waiting
 * out unavailable services and living the life runTransactionJob gives. Its parts come by property
 * so that a processor's constructor names only the service its jobs work through.
 */
export abstract class TransactionJobProcessor<T extends TransactionJobData> extends JobProcessor implements OnModuleInit {
  @Inject(APP_CONFIG) protected readonly config!: AppConfig;
  @Inject(Metrics) private readonly metrics!: Metrics;
  @Inject(TransactionService) private readonly transactions!: TransactionService;
  protected abstract readonly logger: Logger;

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  /**
   * One attempt at `job`: `what` names it in waits and failures, `type` in the job-duration metric.
   * The job works on its table under the name the table has now (a rename since it was queued moved
   * its transaction with it), so the steps are made once that is known.
   */
  protected attempt(job: Job<T>, token: string | undefined, type: string, what: string, steps: () => TransactionJob): Promise<string> {
    const attempts = transactionAttempts(job, what, this.config, this.transactions, this.logger);
    return timedJob(this.metrics, type, () =>
      runAttempt(job, token, async () => {
        if (job.data.table) job.data.table = await this.tableNow(job.data);
        return runTransactionJob(job, steps());
      }, attempts),
    );
  }

  /** The job's table under the name it has now. */
  protected async tableNow(data: T): Promise<string[]> {
    const table = await this.transactions.tableOf(workerContext(data.database), data.transactionId);
    return table ? [...table] : data.table!;
  }
}
