import { join } from 'node:path';
import { PostgresEventStore, WrongExpectedRevisionError } from '../src';
import { describeEventStoreConformance, spawnAckingWriter } from '../src/conformance/event-store-conformance';
import { TestDatabase, createTestDatabase } from '../../../test/support/postgres';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase('conformance');
});
afterAll(() => database?.drop());

describeEventStoreConformance('PostgreSQL', {
  open: async () => new PostgresEventStore(database.url),
  spawnWriter: (stream, count) =>
    spawnAckingWriter(join(__dirname, '../src/conformance/acking-writer.ts'), [database.url, '/tmp', stream, String(count)], {}),
});

describe('the PostgreSQL event store beyond the port', () => {
  it('keeps the global order gap-free under concurrent appenders: a reader never skips an event committed after it read', async () => {
    const writers = await Promise.all(Array.from({ length: 4 }, () => new PostgresEventStore(database.url, { poolSize: 4 })));
    const reader = new PostgresEventStore(database.url);
    const start = (await reader.readAll({ afterPosition: 0n })).reduce((m, e) => (e.position > m ? e.position : m), 0n);
    const streams = Array.from({ length: 8 }, (_, i) => `gap-${i}-${Date.now()}`);
    const appends = streams.map(async (stream, i) => {
      let expected: number | 'no_stream' = 'no_stream';
      for (let n = 0; n < 25; n++) expected = (await writers[i % writers.length].append(stream, [{ type: 'G', data: { n } }], expected)).nextExpectedRevision;
    });
    // A reader following the log while the writers run, as a catching-up projection does.
    const seen: bigint[] = [];
    let after = start;
    const done = Promise.all(appends);
    let finished = false;
    void done.then(() => (finished = true));
    for (;;) {
      // Only a read begun after every append was acknowledged may end the loop by finding nothing.
      const afterAll = finished;
      const all = await reader.readAll({ afterPosition: after, maxCount: 7 });
      if (all.length) after = all[all.length - 1].position;
      seen.push(...all.filter((e) => streams.includes(e.streamId)).map((e) => e.position));
      if (afterAll && all.length === 0) break;
    }
    await done;
    const everything = (await reader.readAll({ afterPosition: start })).filter((e) => streams.includes(e.streamId)).map((e) => e.position);
    expect(seen).toEqual(everything);
    expect(seen).toHaveLength(200);
    await Promise.all([...writers, reader].map((s) => s.close()));
  });

  it('creates its schema once when several processes start together', async () => {
    const fresh = await createTestDatabase('schema');
    try {
      const stores = Array.from({ length: 5 }, () => new PostgresEventStore(fresh.url));
      await Promise.all(stores.map((s, i) => s.append(`s-${i}`, [{ type: 'A', data: {} }], 'no_stream')));
      expect(await stores[0].streamRevision('s-4')).toBe(0);
      await expect(stores[1].append('s-0', [{ type: 'A', data: {} }], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await Promise.all(stores.map((s) => s.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('says it is unavailable when PostgreSQL cannot be reached', async () => {
    const store = new PostgresEventStore('postgresql://postgres@127.0.0.1:1/nothing');
    await expect(store.ping()).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
    await expect(store.append('s', [{ type: 'A', data: {} }], 'any')).rejects.toMatchObject({ name: 'EventStoreUnavailableError' });
    await store.close();
  });
});
