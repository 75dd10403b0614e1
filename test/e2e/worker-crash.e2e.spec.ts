import * as lancedb from '@lancedb/lancedb';
import { existsSync, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { RunningServer, startServer, tempDataDir } from '../support/server';

/** A table big enough that building an HNSW graph over it takes seconds. */
function bigTable(rows: number, dim: number): arrow.Table {
  const type = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: rows * dim }, () => Math.random());
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: rows }, (_, i) => i)),
    vector: arrow.makeVector(arrow.makeData({ type, length: rows, child: arrow.makeData({ type: new arrow.Float32(), length: rows * dim, data: values }) })),
  });
}

describe('a worker killed in the middle of an index build or a backfill', () => {
  const dataDir = tempDataDir();
  // The backfill's expression repeats a value 20,000 times so that it takes seconds: above the default bound of such counts.
  const env = { QUEUE_PREFIX: `crash-${Date.now()}`, JOB_LOCK_MS: '1500', SQL_EXPRESSION_MAX_REPEAT: '20000' };
  let apiServer: RunningServer;
  const workers: RunningServer[] = [];

  beforeAll(async () => {
    apiServer = await startServer({ dataDir, entry: 'api', env });
  });
  afterAll(async () => {
    for (const w of workers) await w.kill9();
    await apiServer?.stop();
  });

  it('leaves the job to another worker, and the transaction ends Succeeded', async () => {
    const api = new Api(apiServer.url);
    const created = await api.send('POST', '/v1/table/big/create', Buffer.from(arrow.tableToIPC(bigTable(20_000, 64), 'stream')), ARROW_STREAM);
    expect(created.status).toBe(200);
    const requested = await api.post('/v1/table/big/create_index', { column: 'vector', index_type: 'HNSW', name: 'g', m: 16, ef_construction: 200 });
    const tx = requested.body.transaction_id;

    const first = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } });
    workers.push(first);
    await waitFor(() => api.post(`/v1/transaction/${tx}/describe`, {}), (r) => r.body.status !== 'Queued', 30_000);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api.post(`/v1/transaction/${tx}/describe`, {})).body.status).toBe('Running');
    await first.kill9();

    const second = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } });
    workers.push(second);
    const final = await waitFor(
      () => api.post(`/v1/transaction/${tx}/describe`, {}),
      (r) => ['Succeeded', 'Failed'].includes(r.body.status),
      120_000,
    );
    expect(final.body.status).toBe('Succeeded');
    expect(Number(final.body.properties.attempt)).toBeGreaterThanOrEqual(1);
    // Each attempt records its start; the second one is the retry of the job the killed worker held.
    const starts = (await api.get(`/v1/history/transaction/${tx}`)).body.events.filter((e: any) => e.data.setProperties?.started_at);
    expect(starts.length).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it('stops a running build that is canceled: the index never becomes ready', async () => {
    const api = new Api(apiServer.url);
    const requested = await api.post('/v1/table/big/create_index', { column: 'vector', index_type: 'HNSW', name: 'g2', m: 16, ef_construction: 200 });
    const tx = requested.body.transaction_id;
    await waitFor(() => api.post(`/v1/transaction/${tx}/describe`, {}), (r) => r.body.status === 'Running', 60_000);
    const cancel = await api.post(`/v1/transaction/${tx}/alter`, { actions: [{ setStatusAction: { status: 'Canceled' } }] });
    expect(cancel.body.status).toBe('Canceled');
    // The worker sees the cancel within a second, stops hnswlib's thread mid-build and removes the index.
    await waitFor(
      () => api.post('/v1/table/big/index/list', {}),
      (r) => !r.body.indexes.some((i: any) => i.index_name === 'g2'),
      60_000,
    );
    await waitFor(async () => workers[workers.length - 1].output(), (out) => out.includes('index build stopped'), 10_000);
    const location = (await api.post('/v1/table/big/describe', {})).body.location;
    expect(readdirSync(`${location}/_hnsw`).filter((f) => f.startsWith('g2.'))).toEqual([]);
    expect(existsSync(`${location}/_hnsw/g.bin`)).toBe(true);
    expect((await api.post(`/v1/transaction/${tx}/describe`, {})).body.status).toBe('Canceled');
  }, 120_000);

  it('hands a backfill whose worker was killed to another worker; the transaction ends Succeeded', async () => {
    const api = new Api(apiServer.url);
    // An expression slow enough (seconds over 20,000 rows) to kill the worker while it runs.
    const added = await api.post('/v1/table/big/add_columns', { new_columns: [{ name: 'h', computed: 'sha256(repeat(cast(id as varchar), 20000))' }] });
    expect(added.status).toBe(200);
    const job = (await api.post('/v1/table/big/backfill_column', { column: 'h' })).body.job_id;
    await waitFor(() => api.post(`/v1/transaction/${job}/describe`, {}), (r) => r.body.status === 'Running', 60_000);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api.post(`/v1/transaction/${job}/describe`, {})).body.status).toBe('Running');
    await workers[workers.length - 1].kill9();

    workers.push(await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } }));
    const final = await waitFor(() => api.post(`/v1/transaction/${job}/describe`, {}), (r) => ['Succeeded', 'Failed'].includes(r.body.status), 120_000);
    expect(final.body).toMatchObject({ status: 'Succeeded', properties: { rows_filled: '20000' } });
    const starts = (await api.get(`/v1/history/transaction/${job}`)).body.events.filter((e: any) => e.data.setProperties?.started_at);
    expect(starts.length).toBeGreaterThanOrEqual(2);
  }, 180_000);
});

describe('a worker killed in the middle of a compaction', () => {
  const dataDir = tempDataDir();
  // No planner: the one compaction is the one asked for.
  const env = { QUEUE_PREFIX: `crash-compact-${Date.now()}`, JOB_LOCK_MS: '1500', MAINTENANCE_PLANNER: 'false' };
  let apiServer: RunningServer;
  const workers: RunningServer[] = [];
  // 48 appends of 5,000 rows of 256 floats: about 250 MB, which Lance takes most of a second to
  // rewrite, so the worker dies well before the compaction's commit even on a busy machine.
  const FRAGMENTS = 48;
  const ROWS = 5_000;
  const DIM = 256;

  beforeAll(async () => {
    apiServer = await startServer({ dataDir, entry: 'api', env });
  });
  afterAll(async () => {
    for (const w of workers) await w.kill9();
    await apiServer?.stop();
  });

  it('leaves the job to another worker: one compaction commit, every row, every listed manifest in storage', async () => {
    const api = new Api(apiServer.url);
    const batch = arrowStream(sampleTable(0, ROWS, DIM));
    expect((await api.send('POST', '/v1/table/frag/create', batch, ARROW_STREAM)).status).toBe(200);
    for (let i = 1; i < FRAGMENTS; i++) expect((await api.send('POST', '/v1/table/frag/insert', batch, ARROW_STREAM)).status).toBe(200);
    const location = (await api.post('/v1/table/frag/describe', {})).body.location;
    const listed = async () => (await api.post('/v1/table/frag/version/list', {})).body.versions.map((v: { version: number }) => v.version) as number[];
    const before = await listed();
    expect(before).toHaveLength(FRAGMENTS);

    const first = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } });
    workers.push(first);
    // The moment Lance's compaction writes its first file under data/, the worker holding it dies.
    const data = join(location, 'data');
    const present = new Set(readdirSync(data));
    const killed = new Promise<void>((resolveKill) => {
      const watcher = watch(data, (_event, name) => {
        if (!name || present.has(name)) return;
        first.process.kill('SIGKILL');
        watcher.close();
        resolveKill();
      });
    });
    const job = (await api.post('/v1/table/frag/maintenance/compact', {})).body.job_id;
    await killed;
    await first.kill9();
    // It died mid-compaction: Lance's output begun, the transaction Running, nothing committed.
    expect((await api.post(`/v1/transaction/${job}/describe`, {})).body.status).toBe('Running');
    expect(await listed()).toEqual(before);

    workers.push(await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } }));
    const final = await waitFor(() => api.post(`/v1/transaction/${job}/describe`, {}), (r) => ['Succeeded', 'Failed'].includes(r.body.status), 60_000);
    expect(final.body).toMatchObject({ status: 'Succeeded', properties: { maintenance: 'compact', fragments_before: String(FRAGMENTS), fragments_after: '1' } });
    const starts = (await api.get(`/v1/history/transaction/${job}`)).body.events.filter((e: any) => e.data.setProperties?.started_at);
    expect(starts.length).toBeGreaterThanOrEqual(2);

    // The versions as a Lance client reads them: exactly one commit rewrote the fragments.
    const db = await lancedb.connectNamespace('rest', { uri: apiServer.url });
    const table = await db.openTable('frag');
    const history = await table.listVersions();
    const after = await listed();
    expect(history.map((v) => v.version)).toEqual(after);
    const recorded = (await api.get('/v1/history/table/frag')).body.events.filter((e: any) => e.type === 'TableVersionCreated').map((e: any) => e.data.version);
    expect(recorded).toEqual(after);
    const fragments = history.map((v) => Number(v.metadata.total_fragments));
    const rewrites = history.filter((_, i) => i > 0 && fragments[i] < fragments[i - 1]).map((v) => v.version);
    expect(rewrites).toHaveLength(1);
    expect(fragments[fragments.length - 1]).toBe(1);
    expect(await table.countRows()).toBe(FRAGMENTS * ROWS);
    expect(await table.countRows('id >= 0')).toBe(FRAGMENTS * ROWS);
    table.close();
    db.close();
    expect(Number((await api.post('/v1/table/frag/count_rows', { predicate: 'id >= 0' })).text)).toBe(FRAGMENTS * ROWS);

    // Every version the catalog lists has its manifest in storage.
    const stored = readdirSync(join(location, '_versions'))
      .filter((f) => /^\d{20}\.manifest$/.test(f))
      .map((f) => Number(2n ** 64n - 1n - BigInt(f.slice(0, 20))))
      .sort((a, b) => a - b);
    expect(after.filter((v) => !stored.includes(v))).toEqual([]);
  }, 120_000);
});
