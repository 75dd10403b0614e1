import { nextAttempt } from '../src/unavailable-waits';

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
