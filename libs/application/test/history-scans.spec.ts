import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { NewEvent, SqliteEventStore } from '@app/event-store';
import { HistoryService } from '../src';

/**
 * A history read walks the database's log page by page; the embedded store reads a page without
 * leaving the event loop, so a walk of a long log must hand the loop back between pages, or every
 * other request of every database waits for it (a read key's DescribeTransaction of an unknown id
 * held the server over a second on a log of 300,000 events).
 */
describe('history reads over a long log', () => {
  const store = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'history-scans-')), 'events.sqlite3'));
  const ctx = { database: 'default', context: {}, delimiter: '$' };
  const history = new HistoryService(store);

  beforeAll(async () => {
    const events: NewEvent[] = Array.from({ length: 20_000 }, (_, i) => ({
      type: 'NamespaceCreated',
      data: { namespace: [`ns${i}`], properties: {} },
      metadata: { transactionId: randomUUID(), operation: 'CreateNamespace', occurredAt: new Date().toISOString() },
    }));
    for (let i = 0; i < events.length; i += 5_000) await store.append('catalog-default', events.slice(i, i + 5_000), i === 0 ? 'no_stream' : i - 1);
  }, 60_000);
  afterAll(() => store.close());

  it.each([
    ['a transaction the state no longer holds', () => history.transactionFromLog(ctx, randomUUID())],
    ["a table's history", () => history.tableHistory(ctx, ['nowhere', 't'], {}).catch(() => undefined)],
    ["a transaction's history", () => history.transactionHistory(ctx, randomUUID(), {}).catch(() => undefined)],
  ])('hands the event loop back between pages: %s', async (_what, read) => {
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 0);
    try {
      let finishedAfter = -1;
      await read().then(() => (finishedAfter = ticks));
      // Timers ran while the walk went on: the walk did not hold the loop from start to end.
      expect(finishedAfter).toBeGreaterThan(0);
    } finally {
      clearInterval(ticking);
    }
  });
});
