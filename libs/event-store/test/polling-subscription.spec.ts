import { RecordedEvent } from '../src/event-store.port';
import { WakeUp, pollingSubscription } from '../src/polling-subscription';

const event = (position: number): RecordedEvent => ({
  id: `e${position}`,
  streamId: 's',
  revision: position - 1,
  position: BigInt(position),
  type: 'T',
  data: { position },
  metadata: {},
  created: new Date(0),
});

/** A log the subscription reads from, counting its reads. */
function log() {
  const events: RecordedEvent[] = [];
  let reads = 0;
  return {
    events,
    reads: () => reads,
    readAll: async ({ afterPosition = 0n, maxCount = 1000 }: { afterPosition?: bigint; maxCount?: number }) => {
      reads++;
      return events.filter((e) => e.position > afterPosition).slice(0, maxCount);
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('a polling subscription', () => {
  it('takes this process\'s own appends as handed over, without reading them back', async () => {
    const store = log();
    const wakeUps = new Set<WakeUp>();
    const seen: number[] = [];
    const sub = pollingSubscription(store.readAll, wakeUps, { page: 1000, pollMs: 60_000 }, {}, (e) => void seen.push(Number(e.position)));
    await settle();
    const readsAtStart = store.reads();
    for (let p = 1; p <= 5; p++) {
      const appended = [event(p)];
      store.events.push(...appended);
      for (const wake of wakeUps) wake(appended);
      await settle();
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(store.reads()).toBe(readsAtStart);
    await sub.close();
  });

  it('reads the log when what it is handed does not follow on from what it saw (another process wrote between)', async () => {
    const store = log();
    const wakeUps = new Set<WakeUp>();
    const seen: number[] = [];
    const sub = pollingSubscription(store.readAll, wakeUps, { page: 1000, pollMs: 60_000 }, {}, (e) => void seen.push(Number(e.position)));
    await settle();
    store.events.push(event(1), event(2));
    for (const wake of wakeUps) wake([event(2)]);
    await settle();
    expect(seen).toEqual([1, 2]);
    // A plain wake-up (another process's notification) reads too.
    store.events.push(event(3));
    for (const wake of wakeUps) wake();
    await settle();
    expect(seen).toEqual([1, 2, 3]);
    await sub.close();
  });
});
