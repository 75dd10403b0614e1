import * as lancedb from '@lancedb/lancedb';
import { join } from 'node:path';
import { SqliteEventStore, WRITE_FREEZE_POLL_MS, recordOperatorEvent } from '@app/event-store';
import { Api } from '../support/http';
import { TestDatabase, createTestDatabase } from '../support/postgres';
import { BuiltTable, CatalogShape, countEveryVersion, lanceCatalog, replayDigests, rows, writeCatalog } from '../support/operator';
import { journaledPaths } from '../support/journal';
import { RunningServer, startServer, tempDataDir } from '../support/server';

/**
 * The full-size proof (`npm run check:operator`, OPERATOR_CHECK_FULL=1): 50 tables with branches and
 * tags and 1,000 versions; npm test runs the same scenario on a few tables.
 */
const FULL = process.env.OPERATOR_CHECK_FULL === '1';

const SHAPE: CatalogShape = FULL ? { namespaces: 5, tablesPerNamespace: 10, versionsPerTable: 20 } : { namespaces: 2, tablesPerNamespace: 2, versionsPerTable: 6 };

/** A lancedb client committing to one table over and over; it remembers what was acknowledged. */
class Writer {
  acknowledged = new Map<number, number>();
  failures: string[] = [];
  private rowsWritten = 0;
  private running?: Promise<void>;
  private stopping = false;

  async start(url: string, namespace: string[], name: string, create: boolean): Promise<void> {
    const db = await lancedb.connectNamespace('rest', { uri: url });
    const table = create ? await db.createTable(name, rows(0, 5), namespace) : await db.openTable(name, namespace);
    if (create) {
      this.rowsWritten = 5;
      this.acknowledged.set(await table.version(), 5);
    }
    this.stopping = false;
    this.running = (async () => {
      while (!this.stopping) {
        try {
          const added = await table.add(rows(100_000 + this.rowsWritten, 5));
          this.rowsWritten += 5;
          this.acknowledged.set(added.version, this.rowsWritten);
        } catch (e) {
          this.failures.push(String((e as Error).message).slice(0, 200));
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      table.close();
      db.close();
    })();
  }

  get rows(): number {
    return this.rowsWritten;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }
}

describe(`lance-catalog migrate (${SHAPE.namespaces * SHAPE.tablesPerNamespace} tables, ${SHAPE.namespaces * SHAPE.tablesPerNamespace * SHAPE.versionsPerTable} versions)`, () => {
  const SERVER_ENV = { MAINTENANCE_PLANNER: 'false' };
  let source: RunningServer;
  let dataDir: string;
  let tables: BuiltTable[];
  let postgres: TestDatabase;
  const writer = new Writer();

  beforeAll(async () => {
    source = await startServer({ env: SERVER_ENV });
    dataDir = source.dataDir;
    postgres = await createTestDatabase('migrate');
    const started = Date.now();
    tables = await writeCatalog(source.url, SHAPE);
    if (FULL) console.log(`wrote ${tables.length} tables, ${tables.reduce((n, t) => n + t.rowsAt.size, 0)} versions in ${(Date.now() - started) / 1000} s`);
  }, FULL ? 600_000 : 90_000);

  afterAll(async () => {
    await writer.stop();
    await source?.stop();
    await postgres?.drop();
  });

  it('lets writes resume once a freeze\'s lease runs out, as when the command that took it died', async () => {
    const store = new SqliteEventStore(join(dataDir, 'events.sqlite3'));
    const api = new Api(source.url);
    try {
      await recordOperatorEvent(store, { type: 'WritesFrozen', data: { reason: 'a command that will not renew it', untilMillis: Date.now() + 1500 } });
      await new Promise((r) => setTimeout(r, 2 * WRITE_FREEZE_POLL_MS));
      const refused = await api.post('/v1/namespace/during-the-freeze/create', {});
      expect([refused.status, refused.body.code, refused.headers.get('retry-after')]).toEqual([503, 17, '5']);
      expect((await api.get('/v1/namespace/ns0/list')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await api.post('/v1/namespace/during-the-freeze/create', {})).status).toBe(200);
    } finally {
      await store.close();
    }
  });

  it('moves the catalog from the embedded store to PostgreSQL while a writer commits: every acknowledged commit is there, the digests agree, the client goes on on the new store', async () => {
    await writer.start(source.url, ['ns0'], 'live', true);
    await new Promise((r) => setTimeout(r, 500));
    // The writer's manifests are journaled, not yet synced: the server keeps them until the kernel has written them back.
    expect(journaledPaths(dataDir).length).toBeGreaterThan(0);
    const migrated = await lanceCatalog(['migrate', '--to', postgres.url, '--json'], { EVENT_STORE: 'embedded', DATA_DIR: dataDir });
    expect(migrated.code).toBe(0);
    // The new store keeps no journal: every manifest the old one held was synced and released first.
    expect(journaledPaths(dataDir)).toHaveLength(0);
    expect(migrated.json).toMatchObject({ digests_equal: true, to: postgres.url, next_step: expect.stringContaining(`EVENT_STORE=${postgres.url}`) });
    if (FULL) console.log(JSON.stringify({ ...migrated.json, digests: undefined, writer: { acknowledged: writer.acknowledged.size, failures: writer.failures.length } }));

    // The old store's servers refuse writes from now on, as during a drain.
    const refused = await new Api(source.url).post('/v1/namespace/after-the-move/create', {});
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe(17);
    expect(refused.headers.get('retry-after')).toBe('5');
    await writer.stop();
    const acknowledgedBefore = writer.acknowledged.size;
    expect(acknowledgedBefore).toBeGreaterThan(1);
    await source.stop();

    // `npm run replay` agrees on both sides.
    expect(await replayDigests({ EVENT_STORE: postgres.url, DATA_DIR: dataDir })).toEqual(await replayDigests({ EVENT_STORE: 'embedded', DATA_DIR: dataDir }));

    const target = await startServer({ dataDir, env: { ...SERVER_ENV, EVENT_STORE: postgres.url } });
    try {
      const db = await lancedb.connectNamespace('rest', { uri: target.url });
      const live = await db.openTable('live', ['ns0']);
      expect(await live.countRows()).toBe(writer.rows);
      for (const [version, count] of writer.acknowledged) {
        await live.checkout(version);
        expect([version, await live.countRows()]).toEqual([version, count]);
      }
      live.close();
      db.close();
      // The client goes on writing, now on PostgreSQL.
      await writer.start(target.url, ['ns0'], 'live', false);
      await new Promise((r) => setTimeout(r, 500));
      await writer.stop();
      expect(writer.acknowledged.size).toBeGreaterThan(acknowledgedBefore);
      const counts = await countEveryVersion(target.url, FULL ? tables : tables.slice(0, 2));
      expect(counts.filter((c) => c.counted !== c.expected)).toEqual([]);

      // And back, from PostgreSQL to a fresh embedded store, while that server runs.
      const back = tempDataDir();
      const returned = await lanceCatalog(['migrate', '--from', postgres.url, '--to', 'embedded', '--json'], { DATA_DIR: back });
      expect(returned.code).toBe(0);
      expect(returned.json.digests_equal).toBe(true);
      expect((await new Api(target.url).post('/v1/namespace/after-the-move/create', {})).body.code).toBe(17);
      expect(await replayDigests({ EVENT_STORE: 'embedded', DATA_DIR: back })).toEqual(await replayDigests({ EVENT_STORE: postgres.url, DATA_DIR: dataDir }));
    } finally {
      await target.stop();
    }
  }, FULL ? 600_000 : 90_000);

  it('refuses a target store that already holds events', async () => {
    const refused = await lanceCatalog(['migrate', '--to', postgres.url], { EVENT_STORE: 'embedded', DATA_DIR: dataDir });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/already holds events/);
  });
});
