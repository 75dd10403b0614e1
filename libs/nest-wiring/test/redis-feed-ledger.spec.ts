import { RedisFeedLedger } from '../src/change-feed/redis-feed-ledger';

/** The change feed's lease and checkpoints on the test run's own Redis. */
describe('the change feed ledger in Redis', () => {
  const prefix = `ledger-${process.pid}-${Date.now()}`;
  const ledger = new RedisFeedLedger(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix);
  afterAll(() => ledger.close());

  it('gives a database one holder at a time, for its time to live, and lets only the holder move a checkpoint, never back', async () => {
    expect(await ledger.hold('db', 'a', 300)).toBe(true);
    expect(await ledger.hold('db', 'b', 300)).toBe(false);
    expect(await ledger.hold('db', 'a', 300)).toBe(true);
    expect(await ledger.advance('db', 'nats', 'a', { revision: 10 })).toBe(true);
    // A publisher that lost the lease writes nothing: no gap can follow from its progress.
    expect(await ledger.advance('db', 'nats', 'b', { revision: 50 })).toBe(false);
    expect(await ledger.checkpoint('db', 'nats')).toEqual({ revision: 10 });
    // Duplicates are allowed, a step back is not.
    expect(await ledger.advance('db', 'nats', 'a', { revision: 4, lastError: 'the receiver answered 500', failingSince: 1234 })).toBe(true);
    expect(await ledger.checkpoint('db', 'nats')).toEqual({ revision: 10, lastError: 'the receiver answered 500', failingSince: 1234 });
    expect(await ledger.advance('db', 'nats', 'a', { revision: 11 })).toBe(true);
    expect(await ledger.checkpoint('db', 'nats')).toEqual({ revision: 11 });
    // Not renewed, the lease runs out and another replica takes it.
    await new Promise((r) => setTimeout(r, 400));
    expect(await ledger.hold('db', 'b', 300)).toBe(true);
    expect(await ledger.advance('db', 'nats', 'a', { revision: 12 })).toBe(false);
    await ledger.release('db', 'a');
    expect(await ledger.hold('db', 'a', 300)).toBe(false);
    await ledger.release('db', 'b');
    expect(await ledger.hold('db', 'a', 300)).toBe(true);
    await ledger.forget('db', 'nats');
    expect(await ledger.checkpoint('db', 'nats')).toEqual({});
  });

  it('remembers the databases it found and how far it looked, never back', async () => {
    await ledger.addDatabase('one');
    await ledger.addDatabase('two');
    expect((await ledger.databases()).sort()).toEqual(['one', 'two']);
    expect(await ledger.discovered()).toBe(0n);
    await ledger.discover(120n);
    await ledger.discover(80n);
    expect(await ledger.discovered()).toBe(120n);
  });
});
