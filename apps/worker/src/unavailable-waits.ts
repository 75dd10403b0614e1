import { Job, DelayedError, UnrecoverableError } from 'bullmq';
import { jobFailure } from '@app/application';
import { UnavailableWait, WaitingJob } from '@app/jobs';

/** Delays double from the base up to this: a long outage is looked at about once a minute. */
const MAX_DELAY_MS = 60_000;

export interface WaitSettings {
  /** How long after first finding a service unavailable a job gives up. */
  horizonMs: number;
  baseDelayMs: number;
}

export interface NextAttempt extends UnavailableWait {
  /** When the next attempt starts (epoch ms); absent: the job has waited long enough. */
  at?: number;
}

/**
 * When a job that has just found a service unavailable tries again. The delays double from the base
 * delay, with jitter (half of each is random, so the jobs an outage held do not all come back at
 * once), and no attempt is put after the horizon or the deadline. The horizon counts from the first
 * unavailability; an attempt that ran longer than the horizon before finding another (a long build
 * that did its work) starts a new wait rather than failing at once.
 */
export function nextAttempt(
  previous: UnavailableWait | undefined,
  attemptStartedAt: number,
  now: number,
  settings: WaitSettings,
  deadline = Infinity,
  random: () => number = Math.random,
): NextAttempt {
  const continuing = previous !== undefined && now - attemptStartedAt <= settings.horizonMs;
  const since = continuing ? previous.since : now;
  const waits = continuing ? previous.waits : 0;
  const end = since + settings.horizonMs;
  if (now >= end) return { since, waits };
  const delay = Math.min(MAX_DELAY_MS, settings.baseDelayMs * 2 ** Math.min(waits, 30));
  const at = Math.round(Math.min(end, now + delay / 2 + (random() * delay) / 2));
  return at >= deadline ? { since, waits } : { since, waits: waits + 1, at };
}

export interface AttemptOptions {
  settings: WaitSettings;
  /** What the work does, for a message from Lance that does not say. */
  what: string;
  /** Told of each wait (a transaction's job records it there); a failure to record it does not stop the wait. */
  onWait?: (reason: string, since: Date, nextAttemptAt: Date) => Promise<void>;
  /** When (epoch ms) the answer is no longer wanted: no attempt is put after it. */
  deadline?: number;
  /** The error a refusal fails the job with; by default an UnrecoverableError with its message. */
  refuse?: (error: Error) => Error;
  /** Whether a conflict with concurrent writers is left to the job's attempts (the default) or refused. */
  retryConflicts?: boolean;
  /** The error the job fails with once it has waited long enough. */
  giveUp?: (message: string) => Error;
  /** Told of a failure that is not waited out, before the job fails with it (for the log: what Lance said). */
  onFailed?: (error: Error) => void;
}

/**
 * Runs one attempt of a job's work and says what its failure means to BullMQ:
 *
 * - a refusal (Lance or the catalog refusing the request) fails the job at once: the same request
 *   would be refused again;
 * - a conflict with concurrent writers (code 14) is left to the job's attempts;
 * - an unavailable service (code 17: the catalog API at CATALOG_URL, the event store, the object
 *   store) is waited out: the job goes back to BullMQ's delayed set until its next attempt, its
 *   wait kept in its data, which is not an attempt; past the horizon it fails, saying what it
 *   waited for.
 *
 * A worker that dies meanwhile is untouched by this: its job's lock lapses and the stalled-job
 * check hands the job to another worker, as before.
 */
export async function runAttempt<T extends WaitingJob, R>(job: Job<T>, token: string | undefined, work: () => Promise<R>, options: AttemptOptions): Promise<R> {
  try {
    return await work();
  } catch (e) {
    const failure = jobFailure(e, options.what);
    if (failure.kind !== 'unavailable') options.onFailed?.(failure.error);
    if (failure.kind === 'conflict' && options.retryConflicts !== false) throw failure.error;
    if (failure.kind !== 'unavailable') {
      if (options.refuse) throw options.refuse(failure.error);
      throw failure.error.name === 'UnrecoverableError' ? failure.error : new UnrecoverableError(failure.error.message);
    }
    const now = Date.now();
    const next = nextAttempt(job.data.waiting, job.processedOn ?? now, now, options.settings, options.deadline);
    if (next.at === undefined) {
      const message = `${failure.reason}; gave up after waiting ${Math.round((now - next.since) / 1000)} s for it to come back`;
      throw options.giveUp?.(message) ?? new UnrecoverableError(message);
    }
    await job.updateData({ ...job.data, waiting: { since: next.since, waits: next.waits } });
    await options.onWait?.(failure.reason, new Date(next.since), new Date(next.at)).catch(() => undefined);
    await job.moveToDelayed(next.at, token);
    throw new DelayedError(`waiting until ${new Date(next.at).toISOString()}: ${failure.reason}`);
  }
}

/** Whether a job's attempt ended by going back to wait, rather than failing. */
export function isWait(e: unknown): boolean {
  return e instanceof DelayedError || (e as Error | undefined)?.name === 'DelayedError';
}
