import { existsSync, readdirSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { ARROW_STREAM, waitFor } from '../support/arrow-data';
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
