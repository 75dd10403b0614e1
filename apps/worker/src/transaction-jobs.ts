import { Logger } from '@nestjs/common';
import { AppConfig, jobLockMsFromEnv } from '@app/config';
import { RequestContext, TransactionService, jobFailure } from '@app/application';
import { TransactionStatus } from '@app/catalog';
import { Metrics } from '@app/nest-wiring';
import { Job, UnrecoverableError } from 'bullmq';
import { AttemptOptions, isWait } from './unavailable-waits';

/** Statuses after which a transaction's job has nothing left to do. */
export const FINAL_STATUSES = new Set(['Succeeded', 'Failed', 'Canceled']);

/**
 * A worker that dies holds its job until the lock expires; then the stalled-job check hands the job
 * to another worker, and a job that stalls again is failed (so its transaction ends Failed).
 * Decorators are evaluated at load time, so the setting is read from the environment here.
 */
export function lockOptions() {
  const jobLockMs = jobLockMsFromEnv();
  return { lockDuration: jobLockMs, stalledInterval: jobLockMs, maxStalledCount: 2 };
}

/** Whether a failed attempt was the job's last: refused for good, or out of attempts. */
export function exhausted(job: Job, error: Error): boolean {
  return error instanceof UnrecoverableError || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
}

export function workerContext(database: string): RequestContext {
  return { database, context: { origin: 'worker' }, delimiter: '$' };
}

/** Runs a job's work, timing it by outcome (the answer's first word) in `lance_catalog_job_duration_seconds`. */
export async function timedJob(metrics: Metrics, type: string, work: () => Promise<string>): Promise<string> {
  const stop = metrics.jobSeconds.startTimer({ type });
  try {
    const outcome = await work();
    stop({ outcome: outcome.split(':')[0] });
    return outcome;
  } catch (e) {
    stop({ outcome: isWait(e) ? 'waiting' : 'failed' });
    throw e;
  }
}

/**
 * How a transaction's job runs its attempts (see runAttempt): each wait for an unavailable service
 * is logged and said in the transaction's properties (`waiting_reason`, `waiting_since`,
 * `next_attempt_at`), through the same writer that records its statuses.
 */
export function transactionAttempts(
  job: Job<{ database: string; transactionId: string }>,
  what: string,
  config: AppConfig,
  transactions: TransactionService,
  logger: Logger,
): AttemptOptions {
  const { database, transactionId } = job.data;
  return {
    settings: config.jobUnavailable,
    what,
    onWait: async (reason, since, nextAttemptAt) => {
      logger.warn(`${what} (transaction ${transactionId}) waits until ${nextAttemptAt.toISOString()}: ${reason}`);
      await transactions
        .recordWaiting(workerContext(database), transactionId, { reason, since, nextAttemptAt })
        .catch((e) => logger.warn(`could not record that transaction ${transactionId} waits: ${(e as Error).message}`));
    },
  };
}

/** A lookup of the job's own records failed: gone for good, unless what failed was reaching them. */
export function goneUnlessUnavailable(what: string): (e: unknown) => never {
  return (e) => {
    if (jobFailure(e, what).kind === 'unavailable') throw e;
    throw new UnrecoverableError(`${what}: ${(e as Error).message}`);
  };
}

/** What a job whose work is one call, not to be stopped once begun (a backfill, a view refresh), does at each step. */
export interface OneCallJob {
  /** Where the transaction stands now; throws when the table or the transaction is gone. */
  status(): Promise<TransactionStatus>;
  setStatus(status: TransactionStatus, properties: Record<string, string>): Promise<void>;
  /** The work: answers what the transaction records of it when it ends. */
  work(): Promise<Record<string, string>>;
}

/**
 * Such a job's life: skipped when its transaction is already final (canceled while queued), Running
 * while it works, then Succeeded, or Canceled (keeping what the work wrote) when a cancel came
 * meanwhile. What a failure means (a refusal, a wait) is runAttempt's to say.
 */
export async function runOneCallJob(job: Job, steps: OneCallJob): Promise<string> {
  const before = await steps.status().catch(goneUnlessUnavailable("the job's table or transaction is gone"));
  if (FINAL_STATUSES.has(before)) return `skipped: transaction is ${before}`;
  await steps.setStatus('Running', { started_at: new Date().toISOString(), attempt: String(job.attemptsMade + 1) });
  const outcome = await steps.work();
  const canceled = (await steps.status()) === 'Canceled';
  await steps.setStatus(canceled ? 'Canceled' : 'Succeeded', { ...outcome, finished_at: new Date().toISOString() });
  return canceled ? 'canceled: what the work wrote before the cancel stays' : 'done';
}

/** A failed attempt: logged; the last one marks the transaction Failed with the reason. */
export async function recordFailedAttempt(
  job: Job<{ database: string; transactionId: string }> | undefined,
  error: Error,
  logger: Logger,
  what: string,
  setStatus: (ctx: RequestContext, transactionId: string, status: TransactionStatus, properties: Record<string, string>) => Promise<unknown>,
): Promise<void> {
  if (!job) return;
  logger.warn(`${what} ${job.data.transactionId} attempt ${job.attemptsMade} failed: ${error.message}`);
  if (!exhausted(job, error)) return;
  await setStatus(workerContext(job.data.database), job.data.transactionId, 'Failed', { reason: error.message.slice(0, 1000), finished_at: new Date().toISOString() }).catch((e) =>
    logger.warn(`could not mark ${job.data.transactionId} failed: ${(e as Error).message}`),
  );
}
