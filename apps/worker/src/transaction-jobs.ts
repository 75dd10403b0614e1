import { jobLockMsFromEnv } from '@app/config';
import { RequestContext } from '@app/application';
import { Metrics } from '@app/core';
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
