import { Client } from 'pg';
import { EventStoreUnavailableError, PostgresEventStore } from '../src';
import { TestDatabase, createTestDatabase } from '../../../test/support/postgres';

/**
 * PostgreSQL ending a connection an append holds (a restart, a fast shutdown, an administrator's
 * pg_terminate_backend): the append answers "unavailable" and the process lives on, with the next
 * append on a fresh connection.
 */
describe('the PostgreSQL event store losing an append connection', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('connloss');
  });
  afterAll(() => database?.drop());

  it('fails that append as unavailable and does not crash the process', async () => {
    const store = new PostgresEventStore(database.url);
    const stream = `loss-${Date.now()}`;
    await store.append(stream, [{ type: 'A', data: {} }], 'no_stream');
    // Another session holds the append lock, so the append waits inside its transaction.
    const holder = new Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(7311624091)');
    const crashes: unknown[] = [];
    const onCrash = (e: unknown) => crashes.push(e);
    process.on('uncaughtException', onCrash);
    try {
      const waiting = store.append(stream, [{ type: 'B', data: {} }], 0);
      const settled = waiting.then(
        () => 'appended',
        (e) => e,
      );
      let pid: number | undefined;
      for (let i = 0; i < 100 && pid === undefined; i++) {
        const r = await holder.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
        );
        pid = r.rows[0]?.pid;
        if (pid === undefined) await new Promise((r2) => setTimeout(r2, 50));
      }
      expect(pid).toEqual(expect.any(Number));
      await holder.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await settled).toBeInstanceOf(EventStoreUnavailableError);
      // The connection's end is reported after the query's failure: give it time to arrive.
      await new Promise((r) => setTimeout(r, 500));
      expect(crashes).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await store.append(stream, [{ type: 'C', data: {} }], 0)).nextExpectedRevision).toBe(1);
    await store.close();
  });
});
