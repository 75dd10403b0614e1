import * as lancedb from '@lancedb/lancedb';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Api } from '../support/http';
import { TestDatabase, createTestDatabase } from '../support/postgres';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { TcpProxy, startTcpProxy } from '../support/tcp-proxy';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * The catalog on a PostgreSQL event store: replicas with data directories of their own share the
 * log through PostgreSQL alone; a fresh process serves the same answers; replay and history read
 * it; an outage answers 503 code 17 and passes.
 */
describe('the PostgreSQL event store', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let a: RunningServer;
  let b: RunningServer | undefined;
  let url: string;
  const warehouse = tempDataDir('pg-warehouse-');

  beforeAll(async () => {
    database = await createTestDatabase('e2e');
    proxy = await startTcpProxy(new URL(database.url).port ? Number(new URL(database.url).port) : 5432);
    const through = new URL(database.url);
    through.port = String(proxy.port);
    url = through.toString();
    a = await startServer({ env: { EVENT_STORE: url, WAREHOUSE: warehouse } });
  }, 60_000);

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await proxy?.close();
    await database?.drop();
  });

  it('serves the lancedb client, and a replica with an empty data directory reads every write at once', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: a.url });
    await db.createNamespace(['shop']);
    const table = await db.createTable('items', [{ id: 1, v: [1, 0] }, { id: 2, v: [0, 1] }], ['shop']);
    await table.add([{ id: 3, v: [1, 1] }]);
    table.close();
    db.close();

    b = await startServer({ entry: 'api', dataDir: tempDataDir('pg-replica-'), env: { EVENT_STORE: url, WAREHOUSE: warehouse } });
    const [apiA, apiB] = [new Api(a.url), new Api(b.url)];
    expect((await apiB.get('/v1/history/digest')).body).toEqual((await apiA.get('/v1/history/digest')).body);
    expect((await apiB.post('/v1/table/shop%24items/count_rows', {})).body).toBe(3);
    expect((await apiB.post('/v1/table/shop%24items/version/list', {})).body).toEqual((await apiA.post('/v1/table/shop%24items/version/list', {})).body);
    for (let i = 0; i < 10; i++) {
      expect((await apiA.post(`/v1/namespace/ns${i}/create`, {})).status).toBe(200);
      expect((await apiB.post(`/v1/namespace/ns${i}/exists`, {})).status).toBe(200);
    }
    const history = await apiB.get('/v1/history/table/shop%24items');
    expect(history.body.events.map((e: { type: string }) => e.type)).toEqual(['TableDeclared', 'TableVersionCreated', 'TableVersionCreated']);
    expect((await apiB.get('/readyz')).body.event_store).toBe('postgresql');
  });

  it('replays the log from PostgreSQL to the digest the servers answer', async () => {
    const digest = (await new Api(a.url).get('/v1/history/digest')).body;
    const { stdout } = await run(process.execPath, [resolve(ROOT, 'dist/apps/api/src/replay.js')], {
      cwd: ROOT,
      env: { ...process.env, EVENT_STORE: url, DATA_DIR: tempDataDir('pg-replay-') },
    });
    const report = JSON.parse(stdout);
    const replayed = report.databases.find((d: { database: string }) => d.database === 'default');
    expect({ digest: replayed.digest, revision: replayed.revision }).toEqual({ digest: digest.digest, revision: digest.revision });
    expect(replayed.tables).toBe(1);
  });

  it('answers 503 code 17 and /readyz names the store while PostgreSQL is unreachable, and recovers', async () => {
    const api = new Api(a.url);
    await proxy.cut();
    try {
      const refused = await api.post('/v1/namespace/during/create', {});
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 17 });
      expect(refused.headers.get('retry-after')).toBeTruthy();
      const ready = await api.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.error).toContain('event_store');
      expect(JSON.parse(ready.body.detail).event_store).toContain('PostgreSQL event store at postgresql://postgres@127.0.0.1');
      expect((await api.get('/healthz')).status).toBe(200);
    } finally {
      await proxy.restore();
    }
    let created = await api.post('/v1/namespace/after/create', {});
    for (let i = 0; i < 50 && created.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 200));
      created = await api.post('/v1/namespace/after/create', {});
    }
    expect(created.status).toBe(200);
    expect((await new Api(b!.url).post('/v1/namespace/after/exists', {})).status).toBe(200);
    expect((await api.post('/v1/namespace/during/exists', {})).body.code).toBe(1);
  });
});
