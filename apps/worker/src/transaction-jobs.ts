import { Logger } from '@nestjs/common';
import { jobLockMsFromEnv } from '@app/config';
import { RequestContext } from '@app/application';
import { CatalogError, ErrorCode, TransactionStatus } from '@app/catalog';
import { Metrics } from '@app/nest-wiring';
import { Job, UnrecoverableError } from 'bullmq';

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
    stop({ outcome: 'failed' });
    throw e;
  }
}

/** What a job whose work is one call, not to be stopped once begun (a backfill, a view refresh), does at each step. */
export interface OneCallJob {
  /** Where the transaction stands now; throws when the table or the transaction is gone. */
  status(): Promise<TransactionStatus>;
  setStatus(status: TransactionStatus, properties: Record<string, string>): Promise<void>;
  /** The work: answers what the transaction records of it when it ends. */
  work(): Promise<Record<string, string>>;
}

/** Lance refusing the request itself: a retry would be refused again. */
const REFUSED = /invalid input|not computed|not found|schema error|stable row id/i;

/**
 * Such a job's life: skipped when its transaction is already final (canceled while queued), Running
 * while it works, then Succeeded, or Canceled (keeping what the work wrote) when a cancel came
 * meanwhile. A refusal is not retried; anything else is left to BullMQ's attempts.
 */
export async function runOneCallJob(job: Job, steps: OneCallJob): Promise<string> {
  const before = await steps.status().catch((e) => {
    throw new UnrecoverableError(`the job's table or transaction is gone: ${(e as Error).message}`);
  });
  if (FINAL_STATUSES.has(before)) return `skipped: transaction is ${before}`;
  await steps.setStatus('Running', { started_at: new Date().toISOString(), attempt: String(job.attemptsMade + 1) });
  let outcome: Record<string, string>;
  try {
    outcome = await steps.work();
  } catch (e) {
    if (e instanceof CatalogError && e.code !== ErrorCode.ServiceUnavailable) throw new UnrecoverableError(e.message);
    if (e instanceof Error && REFUSED.test(e.message)) throw new UnrecoverableError(e.message);
    throw e;
  }
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
