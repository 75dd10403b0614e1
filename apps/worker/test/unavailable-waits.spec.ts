import { Job } from 'bullmq';
import { CatalogError, ErrorCode } from '@app/catalog';
import { nextAttempt, runAttempt } from '../src/unavailable-waits';

describe('waiting out an unavailable service', () => {
  const settings = { horizonMs: 600_000, baseDelayMs: 1000 };
  const now = 1_000_000_000;

  it('waits the base delay, half of it random, from the first unavailability', () => {
    expect(nextAttempt(undefined, now, now, settings, Infinity, () => 0)).toEqual({ since: now, waits: 1, at: now + 500 });
    expect(nextAttempt(undefined, now, now, settings, Infinity, () => 1)).toEqual({ since: now, waits: 1, at: now + 1000 });
  });

  it('doubles the delay with every wait, up to a minute', () => {
    const since = now - 10_000;
    expect(nextAttempt({ since, waits: 3 }, now, now, settings, Infinity, () => 1)).toEqual({ since, waits: 4, at: now + 8000 });
    expect(nextAttempt({ since, waits: 3 }, now, now, settings, Infinity, () => 0)).toEqual({ since, waits: 4, at: now + 4000 });
    expect(nextAttempt({ since, waits: 40 }, now, now, settings, Infinity, () => 1).at).toBe(now + 60_000);
  });

  it('puts no attempt after the horizon, and gives up once it has passed', () => {
    const since = now - 599_000;
    expect(nextAttempt({ since, waits: 12 }, now, now, settings, Infinity, () => 1)).toEqual({ since, waits: 13, at: since + 600_000 });
    expect(nextAttempt({ since, waits: 13 }, now, since + 600_000, settings)).toEqual({ since, waits: 13 });
    expect(nextAttempt(undefined, now, now, { horizonMs: 0, baseDelayMs: 1000 })).toEqual({ since: now, waits: 0 });
  });

  it('starts a new wait after an attempt that ran longer than the horizon', () => {
    const next = nextAttempt({ since: now - 3_600_000, waits: 9 }, now - 700_000, now, settings, Infinity, () => 0);
    expect(next).toEqual({ since: now, waits: 1, at: now + 500 });
  });

  it('gives up rather than try again after the deadline of whoever waits for the answer', () => {
    expect(nextAttempt(undefined, now, now, settings, now + 400, () => 0)).toEqual({ since: now, waits: 0 });
    expect(nextAttempt(undefined, now, now, settings, now + 600, () => 0).at).toBe(now + 500);
  });
});

describe('a failure that is not waited out', () => {
  const settings = { horizonMs: 600_000, baseDelayMs: 1000 };
  const job = { data: {} } as unknown as Job<{ waiting?: { since: number; waits: number } }>;
  const attempt = (message: string, told: Error[]) =>
    runAttempt(job, undefined, () => Promise.reject(new Error(message)), { settings, what: 'building the index', onFailed: (e) => told.push(e) });

  it("fails the job in the catalog's words and tells the log what Lance said", async () => {
    const told: Error[] = [];
    const lance = 'Invalid user input: something Lance alone words, /usr/local/cargo/registry/src/lance-12.0.0/src/x.rs:1:2';
    const failed = await attempt(lance, told).catch((e: Error) => e);
    expect(failed.name).toBe('UnrecoverableError');
    expect(failed.message).toMatch(/^building the index: /);
    expect(failed.message).not.toContain('cargo');
    expect(told.map((e) => (e as CatalogError).internal)).toEqual([lance]);
  });

  it('leaves a conflict with a concurrent commit to the next attempt, and tells the log too', async () => {
    const told: Error[] = [];
    const failed = await attempt('Invalid user input: The commit would produce two fragments with id 194. Fragment ids must be unique.', told).catch((e: Error) => e);
    expect((failed as CatalogError).code).toBe(ErrorCode.ConcurrentModification);
    expect(told).toHaveLength(1);
  });
});
