import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@app/event-store';
import { HistoryEntry, HistorySink, LiveHistory } from '../src';

const stream = (db: string) => `catalog-${db}`;
const event = (n: number) => ({ type: 'NamespaceCreated', data: { namespace: [`ns${n}`], properties: {} }, metadata: { transactionId: `tx${n}`, operation: 'CreateNamespace', occurredAt: new Date().toISOString() } });

/** A receiver that keeps what it gets; `room` entries fit before it reports a full buffer until drained. */
function collector(room = Infinity) {
  const got: HistoryEntry[] = [];
  let buffered = 0;
  let drain: () => void = () => undefined;
  const sink: HistorySink = {
    write: (entry) => {
      got.push(entry);
      buffered++;
      return buffered < room;
    },
    drained: () =>
      new Promise<void>((resolve) => {
        drain = resolve;
        // The receiver empties its buffer a little later.
        setTimeout(() => ((buffered = 0), drain()), 5);
      }),
    fail: (e) => {
      throw e;
    },
  };
  return { got, sink };
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** LiveHistory over the real embedded store: every event once, in order, from any revision on. */
describe('LiveHistory', () => {
  let store: SqliteEventStore;
  let live: LiveHistory;
  let next = 0;
  const append = async (db: string, count: number) => {
    const head = await store.streamRevision(stream(db));
    await store.append(stream(db), Array.from({ length: count }, () => event(next++)), head < 0 ? 'no_stream' : head);
  };

  beforeEach(() => {
    store = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'live-history-')), 'events.sqlite3'));
    live = new LiveHistory(store);
  });
  afterEach(async () => {
    await live.close();
    await store.close();
  });

  it('delivers the log from any revision, then every event appended, in order and once', async () => {
    await append('a', 300);
    const fromStart = collector();
    const fromMiddle = collector();
    const fromHead = collector();
    live.follow('a', -1, fromStart.sink);
    live.follow('a', 149, fromMiddle.sink);
    live.follow('a', 299, fromHead.sink);
    await until(() => fromStart.got.length === 300 && fromMiddle.got.length === 150);
    for (let i = 0; i < 20; i++) await append('a', 5);
    await until(() => fromStart.got.length === 400);
    await until(() => fromHead.got.length === 100);
    expect(fromStart.got.map((e) => e.revision)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(fromMiddle.got.map((e) => e.revision)).toEqual(Array.from({ length: 250 }, (_, i) => 150 + i));
    expect(fromHead.got.map((e) => e.revision)).toEqual(Array.from({ length: 100 }, (_, i) => 300 + i));
    expect(fromHead.got[0]).toMatchObject({ type: 'NamespaceCreated', operation: 'CreateNamespace', transaction_id: 'tx300', data: { namespace: ['ns300'] } });
  });

  it('keeps a slow receiver complete and in order, holding no more than its own buffer', async () => {
    const slow = collector(3);
    live.follow('b', -1, slow.sink);
    for (let i = 0; i < 50; i++) await append('b', 4);
    await until(() => slow.got.length === 200);
    expect(slow.got.map((e) => e.revision)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it("follows a database with no events yet, and never another database's", async () => {
    const empty = collector();
    live.follow('c', -1, empty.sink);
    await append('other', 10);
    await new Promise((r) => setTimeout(r, 1_200));
    await append('c', 2);
    await until(() => empty.got.length === 2, 5_000);
    await append('other', 10);
    await append('c', 1);
    await until(() => empty.got.length === 3);
    expect(empty.got.map((e) => e.revision)).toEqual([0, 1, 2]);
  });

  it('stops delivering to a closed follower', async () => {
    const gone = collector();
    const stays = collector();
    const follower = live.follow('d', -1, gone.sink);
    live.follow('d', -1, stays.sink);
    await append('d', 3);
    await until(() => gone.got.length === 3 && stays.got.length === 3);
    follower.close();
    await append('d', 3);
    await until(() => stays.got.length === 6);
    expect(gone.got).toHaveLength(3);
  });
});
