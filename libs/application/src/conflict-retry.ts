import { CatalogError, ErrorCode } from '@app/catalog';

/** How a write that lost every commit race Lance ran is tried again. */
export interface ConflictRetry {
  /** Attempts in all, the first included. */
  attempts: number;
  /** No attempt starts this long after the first one did. */
  withinMs: number;
  /** The pause before the second attempt; it doubles after each, with jitter. */
  firstPauseMs: number;
}

export const WRITE_CONFLICT_RETRY: ConflictRetry = { attempts: 3, withinMs: 20_000, firstPauseMs: 200 };

/**
 * Runs `write` again while it ends in a commit conflict (409 code 14) that committed nothing, for
 * writes that do not depend on what they read of the table (an insert's rows, an index dropped by
 * name): when Lance spent its own retries against other writers (two inserters and a compaction,
 * all slowed by an outage) the same write made again is exactly what the caller asked for, and
 * answering "retry" would only make every client do it. Once the attempts or the time are spent
 * the answer is 503 code 17: nothing in the request conflicts with anything, the table's commits
 * could not get through for now, and nothing was written, so the same request later is safe.
 * `what` names the write in that answer, as its conflict did; `committed` says whether some
 * attempt's commit was recorded after all, in which case the conflict is the answer.
 */
export async function retryingConflicts<T>(what: string, write: () => Promise<T>, committed: () => boolean, retry: ConflictRetry = WRITE_CONFLICT_RETRY): Promise<T> {
  const started = Date.now();
  let pause = retry.firstPauseMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (e) {
      if (!(e instanceof CatalogError) || e.code !== ErrorCode.ConcurrentModification || committed()) throw e;
      const wait = pause * (0.5 + Math.random());
      if (attempt >= retry.attempts || Date.now() + wait - started >= retry.withinMs) throw spent(what, e, attempt, Date.now() - started);
      await new Promise((r) => setTimeout(r, wait));
      pause *= 2;
    }
  }
}

function spent(what: string, conflict: CatalogError, attempts: number, ms: number): CatalogError {
  return new CatalogError(
    ErrorCode.ServiceUnavailable,
    `${what}: other writers kept changing the table (${attempts} attempt${attempts > 1 ? 's' : ''} over ${Math.round(ms / 1000)} s); nothing was written, retry later`,
    undefined,
    conflict.internal,
  );
}
