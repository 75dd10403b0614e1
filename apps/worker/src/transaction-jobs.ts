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
    // The transaction's reason is in the catalog's words; what Lance itself said goes to the log only.
    onFailed: (error) => {
      const internal = (error as { internal?: string }).internal;
      if (internal) logger.warn(`${what} (transaction ${transactionId}): ${internal}`);
    },
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

/** How often a job whose work can stop looks for its transaction being canceled. */
const CANCEL_CHECK_MS = 1000;

/** What the job life offers the work while it runs. */
export interface JobLife {
  /** For work that can stop: from now on the transaction is looked at every second, and the signal aborts once it is Canceled. */
  stoppable(): AbortSignal;
}

/** What a transaction's job does at each step of its life (see runTransactionJob). */
export interface TransactionJob {
  /** Where the transaction stands now; throws when the table or the transaction is gone. */
  status(): Promise<TransactionStatus>;
  setStatus(status: TransactionStatus, properties: Record<string, string>): Promise<void>;
  /** The work: answers what the transaction records of it when it ends. */
  work(life: JobLife): Promise<Record<string, string>>;
  /**
   * What a cancel leaves that came while the work ran: absent, what the work wrote stays and the
   * transaction ends Canceled with it (one Lance call, not to be undone); given, the work's result
   * is undone (a built index dropped), `stopped` when the work stopped at the cancel, and this
   * answers the job's outcome.
   */
  undo?(when: 'stopped' | 'finished'): Promise<string>;
  /** The job's outcome when it succeeded; 'done' unless said. */
  succeeded?: string;
  /** What the job fails with when its table or transaction is gone at the start. */
  gone?: string;
}

/**
 * The life every transaction's job lives (index builds, backfills, view refreshes, maintenance):
 * skipped when its transaction is already final (canceled while queued), Running while it works,
 * then Succeeded, or Canceled when a cancel came meanwhile (see `undo`); work done before a wait is
 * not done again (FinishedWork). What a failure means (a refusal, a wait) is runAttempt's to say.
 */
export async function runTransactionJob(job: Job, steps: TransactionJob): Promise<string> {
  const before = await steps.status().catch(goneUnlessUnavailable(steps.gone ?? "the job's table or transaction is gone"));
  if (FINAL_STATUSES.has(before)) return `skipped: transaction is ${before}`;
  const finished = (job.data as FinishedWork).finishedWork;
  const done = finished ? { outcome: finished } : await doWork(job, steps);
  if ('stopped' in done) return done.stopped;
  const { outcome } = done;
  if ((await steps.status()) === 'Canceled') {
    if (steps.undo) return steps.undo('finished');
    await steps.setStatus('Canceled', { ...outcome, finished_at: new Date().toISOString() });
    return 'canceled: what the work wrote before the cancel stays';
  }
  await steps.setStatus('Succeeded', { ...outcome, finished_at: new Date().toISOString() });
  return steps.succeeded ?? 'done';
}

/**
 * A job's data once its work is done: what the work answered. A wait for the event store before
 * the outcome is recorded comes back to record it, on whichever worker takes the job, without
 * doing the work again (a compaction would commit once more under the same transaction).
 */
interface FinishedWork {
  finishedWork?: Record<string, string>;
}

/** Running, then the work; answers its outcome, or the job's when the work stopped at a cancel. */
async function doWork(job: Job, steps: TransactionJob): Promise<{ outcome: Record<string, string> } | { stopped: string }> {
  await steps.setStatus('Running', { started_at: new Date().toISOString(), attempt: String(job.attemptsMade + 1) });
  const canceled = new AbortController();
  let watch: NodeJS.Timeout | undefined;
  const life: JobLife = {
    stoppable: () => {
      watch ??= setInterval(() => void steps.status().then((s) => s === 'Canceled' && canceled.abort(), () => undefined), CANCEL_CHECK_MS);
      return canceled.signal;
    },
  };
  let outcome: Record<string, string>;
  try {
    outcome = await steps.work(life);
  } catch (e) {
    if (canceled.signal.aborted && steps.undo) return { stopped: await steps.undo('stopped') };
    throw e;
  } finally {
    clearInterval(watch);
  }
  // Best effort: without Redis the job cannot be put back to wait either, and it is the stalled check's.
  await job.updateData({ ...job.data, finishedWork: outcome }).catch(() => undefined);
  return { outcome };
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
