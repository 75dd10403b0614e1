import { Queue } from 'bullmq';
import { QUEUES, redisConnection } from '@app/jobs';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { TcpProxy, startTcpProxy } from '../support/tcp-proxy';

describe('asynchronous index builds (API and worker in one process)', () => {
  let server: RunningServer;
  let api: Api;
  const settle = (id: string) =>
    waitFor(
      () => api.post(`/v1/transaction/${id}/describe`, {}),
      (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status),
    ).then((r) => r.body);

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    await api.post('/v1/namespace/ix/create', {});
    const created = await api.send('POST', '/v1/table/ix%24t/create', arrowStream(sampleTable(0, 600)), ARROW_STREAM);
    expect(created.status).toBe(200);
  });
  afterAll(() => server?.stop());

  it.each([
    ['IVF_PQ', 'vector', { num_partitions: 2, num_sub_vectors: 2, distance_type: 'l2' }],
    ['IVF_FLAT', 'vector', { num_partitions: 2, distance_type: 'cosine' }],
    ['IVF_HNSW_SQ', 'vector', { num_partitions: 1, m: 8, ef_construction: 50 }],
    ['IVF_HNSW_PQ', 'vector', { num_partitions: 1, num_sub_vectors: 2 }],
    ['BTREE', 'id', {}],
    ['BITMAP', 'category', {}],
    ['LABEL_LIST', 'labels', {}],
    ['FTS', 'text', { with_position: true, base_tokenizer: 'simple', language: 'English', lower_case: true, stem: true, remove_stop_words: true, ascii_folding: true, max_token_length: 40 }],
  ])('builds %s on a worker: Queued → Running → Succeeded', async (type, column, options) => {
    const name = `${type.toLowerCase()}_${column}`;
    const res = await api.post('/v1/table/ix%24t/create_index', { column, index_type: type, name, ...options });
    expect(res.status).toBe(200);
    expect(typeof res.body.transaction_id).toBe('string');
    const final = await settle(res.body.transaction_id);
    expect(final).toMatchObject({ status: 'Succeeded', properties: { operation: 'CreateTableIndex', index_name: name, index_type: type } });
    const history = await api.get(`/v1/history/transaction/${res.body.transaction_id}`);
    const statuses = history.body.events.map((e: any) => (e.type === 'TableIndexRequested' ? 'Queued' : e.data.status)).filter(Boolean);
    expect(statuses).toEqual(['Queued', 'Running', 'Succeeded']);
    const listed = await api.post('/v1/table/ix%24t/index/list', {});
    expect(listed.body.indexes).toContainEqual(
      expect.objectContaining({ index_name: name, index_uuid: res.body.transaction_id, columns: [column], status: 'ready' }),
    );
    const stats = await api.post(`/v1/table/ix%24t/index/${name}/stats`, {});
    expect(stats.status).toBe(200);
    expect(stats.body.num_indexed_rows).toBe(600);
  });

  it('uses the built indexes in queries: full-text search and filters', async () => {
    const res = await fetch(`${server.url}/v1/table/ix%24t/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ k: 5, full_text_query: { string_query: { query: 'cherry', columns: ['text'] } }, columns: { column_names: ['id', 'text'] } }),
    });
    expect(res.status).toBe(200);
    const { tableFromIPC } = await import('apache-arrow');
    const rows = tableFromIPC(new Uint8Array(await res.arrayBuffer())).toArray().map((r) => r.toJSON());
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(String(row.text)).toContain('cherry');
  });

  it('names an index automatically and pages the list', async () => {
    const res = await api.post('/v1/table/ix%24t/create_scalar_index', { column: 'id', index_type: 'btree' });
    expect(res.body.index_name).toBe('id_idx');
    await settle(res.body.transaction_id);
    const first = await api.post('/v1/table/ix%24t/index/list?limit=2', {});
    expect(first.body.indexes).toHaveLength(2);
    const next = await api.post(`/v1/table/ix%24t/index/list?limit=100&page_token=${first.body.page_token}`, {});
    expect(next.body.indexes.length).toBe(7);
    expect(next.body.page_token).toBeNull();
  });

  it('lists the indexes a version holds, as Lance holds them there, on main and on a branch', async () => {
    const T = '/v1/table/ix%24v';
    const names = (r: { body: { indexes: Array<{ index_name: string }> } }) => r.body.indexes.map((i) => i.index_name);
    expect((await api.send('POST', `${T}/create`, arrowStream(sampleTable(0, 300)), ARROW_STREAM)).status).toBe(200);
    const v1 = (await api.post(`${T}/describe`, {})).body.version as number;

    const built = await api.post(`${T}/create_index`, { column: 'id', index_type: 'BTREE', name: 'by_id' });
    const done = await settle(built.body.transaction_id);
    expect(done.status).toBe('Succeeded');
    const v2 = Number(done.properties.table_version);
    expect(v2).toBeGreaterThan(v1);
    const second = await api.post(`${T}/create_index`, { column: 'category', index_type: 'BITMAP', name: 'by_category' });
    expect((await settle(second.body.transaction_id)).status).toBe('Succeeded');
    const latest = await api.post(`${T}/index/list`, {});
    expect(names(latest)).toEqual(['by_category', 'by_id']);
    expect(latest.body.indexes[1]).toMatchObject({ index_name: 'by_id', index_uuid: built.body.transaction_id, columns: ['id'], status: 'ready', index_type: 'BTREE' });

    // Before the first build: nothing, though the catalog recorded both requests since.
    expect((await api.post(`${T}/index/list`, { version: v1 })).body).toEqual({ indexes: [], page_token: null });
    // At the first build's version: that index alone, as the latest listing names it.
    const atV2 = await api.post(`${T}/index/list`, { version: v2 });
    expect(atV2.body.indexes).toEqual([latest.body.indexes[1]]);
    // The latest version named: both, as Lance holds them.
    const v3 = (await api.post(`${T}/describe`, {})).body.version as number;
    expect(names(await api.post(`${T}/index/list`, { version: v3 }))).toEqual(['by_category', 'by_id']);
    // Paged at a version, as at the latest.
    const first = await api.post(`${T}/index/list`, { version: v3, limit: 1 });
    expect([names(first), first.body.page_token]).toEqual([['by_category'], 'by_category']);
    const next = await api.post(`${T}/index/list`, { version: v3, limit: 1, page_token: first.body.page_token });
    expect([names(next), next.body.page_token]).toEqual([['by_id'], null]);
    // DescribeTableIndexStats keeps to the same view.
    expect((await api.post(`${T}/index/by_id/stats`, { version: v2 })).body).toMatchObject({ num_indexed_rows: 300 });
    const noStats = await api.post(`${T}/index/by_category/stats`, { version: v2 });
    expect([noStats.status, noStats.body.code]).toEqual([404, 6]);

    for (const version of [v3 + 50, 0]) {
      const missing = await api.post(`${T}/index/list`, { version });
      expect([version, missing.status, missing.body.code]).toEqual([version, 404, 11]);
    }

    // A branch from v2: main's index at its first version, its own build at the versions after.
    expect((await api.post(`${T}/branches/create`, { name: 'dev', from_version: v2 })).status).toBe(200);
    const own = await api.post(`${T}/create_index`, { column: 'text', index_type: 'FTS', name: 'by_text', branch: 'dev' });
    const ownDone = await settle(own.body.transaction_id);
    expect(ownDone.status).toBe('Succeeded');
    expect(names(await api.post(`${T}/index/list`, { branch: 'dev' }))).toEqual(['by_id', 'by_text']);
    expect(names(await api.post(`${T}/index/list`, { branch: 'dev', version: v2 }))).toEqual(['by_id']);
    const onDev = await api.post(`${T}/index/list`, { branch: 'dev', version: Number(ownDone.properties.table_version) });
    expect(onDev.body.indexes).toContainEqual(expect.objectContaining({ index_name: 'by_text', index_uuid: own.body.transaction_id, status: 'ready' }));
    const notOnDev = await api.post(`${T}/index/list`, { branch: 'dev', version: v3 + 50 });
    expect([notOnDev.status, notOnDev.body.code]).toEqual([404, 11]);
  });

  it('refuses bad requests before queueing anything', async () => {
    const cases: Array<[object, number, number]> = [
      [{ column: 'vector', index_type: 'SUPER_FAST' }, 400, 13],
      [{ column: 'vector', index_type: 'IVF_PQ', with_position: true }, 400, 13],
      [{ column: 'vector', index_type: 'IVF_PQ', num_partitions: -2 }, 400, 13],
      [{ column: 'vector', index_type: 'IVF_PQ', distance_type: 'manhattan' }, 400, 13],
      [{ column: 'nope', index_type: 'BTREE' }, 404, 12],
      [{ column: 'text', index_type: 'IVF_PQ' }, 400, 13],
      [{ column: 'vector', index_type: 'FTS' }, 400, 13],
      [{ column: 'id', index_type: 'BTREE', name: 'btree_id' }, 409, 7],
      [{ column: 'vector', index_type: 'IVF_SQ' }, 406, 0],
      [{ index_type: 'BTREE' }, 400, 13],
      // A build's cost grows with these, on workers every database shares: bounded.
      [{ column: 'vector', index_type: 'HNSW', ef_construction: 1e9 }, 400, 13],
      [{ column: 'vector', index_type: 'HNSW', m: 100_000 }, 400, 13],
      [{ column: 'vector', index_type: 'IVF_PQ', num_partitions: 1e7 }, 400, 13],
      [{ column: 'vector', index_type: 'IVF_PQ', max_iterations: 1e6 }, 400, 13],
    ];
    for (const [body, status, code] of cases) {
      const res = await api.post('/v1/table/ix%24t/create_index', body);
      expect([res.status, res.body.code, JSON.stringify(body)]).toEqual([status, code, JSON.stringify(body)]);
    }
    expect((await api.post('/v1/table/ix%24t/create_index', { column: 'vector', index_type: 'HNSW', ef_construction: 10_001 })).body.error).toBe('ef_construction must be at most 10000');
    const missing = await api.post('/v1/table/ix%24ghost/create_index', { column: 'id', index_type: 'BTREE' });
    expect([missing.status, missing.body.code]).toEqual([404, 4]);
  });

  it('marks a build that Lance refuses as Failed, with the reason', async () => {
    const res = await api.post('/v1/table/ix%24t/create_index', { column: 'vector', index_type: 'IVF_PQ', name: 'bad_pq', num_sub_vectors: 3 });
    expect(res.status).toBe(200);
    const final = await settle(res.body.transaction_id);
    expect(final.status).toBe('Failed');
    expect(final.properties.reason.length).toBeGreaterThan(0);
    const listed = await api.post('/v1/table/ix%24t/index/list', {});
    expect(listed.body.indexes).toContainEqual(expect.objectContaining({ index_name: 'bad_pq', status: 'failed' }));
    const again = await api.post('/v1/table/ix%24t/create_index', { column: 'vector', index_type: 'IVF_PQ', name: 'bad_pq', num_sub_vectors: 2, num_partitions: 2 });
    expect(again.status).toBe(200);
    expect((await settle(again.body.transaction_id)).status).toBe('Succeeded');
  });

  it('drops an index', async () => {
    const dropped = await api.post('/v1/table/ix%24t/index/bitmap_category/drop', {});
    expect(dropped.status).toBe(200);
    const listed = await api.post('/v1/table/ix%24t/index/list', {});
    expect(listed.body.indexes.map((i: any) => i.index_name)).not.toContain('bitmap_category');
    const missing = await api.post('/v1/table/ix%24t/index/bitmap_category/drop', {});
    expect([missing.status, missing.body.code]).toEqual([404, 6]);
    const noStats = await api.post('/v1/table/ix%24t/index/bitmap_category/stats', {});
    expect([noStats.status, noStats.body.code]).toEqual([404, 6]);
  });
});

describe('index builds with the worker in a separate process', () => {
  const dataDir = tempDataDir();
  const env = { QUEUE_PREFIX: `sep-${Date.now()}` };
  let apiServer: RunningServer;
  let worker: RunningServer | undefined;
  let api: Api;

  beforeAll(async () => {
    apiServer = await startServer({ dataDir, entry: 'api', env });
    api = new Api(apiServer.url);
    await api.send('POST', '/v1/table/w/create', arrowStream(sampleTable(0, 300)), ARROW_STREAM);
  });
  afterAll(async () => {
    await worker?.stop();
    await apiServer?.stop();
  });

  it('keeps a build Queued without a worker, lets it be canceled, and a worker then skips it', async () => {
    const canceled = await api.post('/v1/table/w/create_index', { column: 'id', index_type: 'BTREE', name: 'canceled_idx' });
    const queued = await api.post('/v1/table/w/create_index', { column: 'vector', index_type: 'IVF_FLAT', name: 'later_idx', num_partitions: 2 });
    await new Promise((r) => setTimeout(r, 500));
    expect((await api.post(`/v1/transaction/${canceled.body.transaction_id}/describe`, {})).body.status).toBe('Queued');
    const cancel = await api.post(`/v1/transaction/${canceled.body.transaction_id}/alter`, { actions: [{ setStatusAction: { status: 'canceled' } }] });
    expect(cancel.body.status).toBe('Canceled');

    worker = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } });
    const done = await waitFor(
      () => api.post(`/v1/transaction/${queued.body.transaction_id}/describe`, {}),
      (r) => r.body.status === 'Succeeded' || r.body.status === 'Failed',
    );
    expect(done.body.status).toBe('Succeeded');
    expect((await api.post(`/v1/transaction/${canceled.body.transaction_id}/describe`, {})).body.status).toBe('Canceled');
    const listed = await api.post('/v1/table/w/index/list', {});
    expect(listed.body.indexes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ index_name: 'later_idx', status: 'ready' }),
        expect.objectContaining({ index_name: 'canceled_idx', status: 'canceled' }),
      ]),
    );
    const refused = await api.post(`/v1/transaction/${canceled.body.transaction_id}/alter`, { actions: [{ setStatusAction: { status: 'Running' } }] });
    expect([refused.status, refused.body.code]).toEqual([409, 19]);
  });
});

describe('a worker whose catalog API is away', () => {
  const dataDir = tempDataDir();
  const env = { QUEUE_PREFIX: `away-${Date.now()}`, JOB_UNAVAILABLE_HORIZON_SECONDS: '12', JOB_UNAVAILABLE_BASE_DELAY_MS: '200' };
  let apiServer: RunningServer;
  let worker: RunningServer;
  let catalog: TcpProxy;
  let api: Api;
  let queue: Queue;
  const describeTx = (id: string) => api.post(`/v1/transaction/${id}/describe`, {}).then((r) => r.body);
  const settled = (id: string, ms: number) => waitFor(() => describeTx(id), (tx) => ['Succeeded', 'Failed', 'Canceled'].includes(tx.status), ms);
  /**
   * The attempts BullMQ counted for a job, once it has moved the job to completed or failed: it
   * does so just after the job recorded the transaction's outcome, which the tests wait for first.
   */
  const attemptsOnceFinished = async (id: string) => {
    const job = await waitFor(
      async () => {
        const found = await queue.getJob(id);
        return { finishedOn: found?.finishedOn, attemptsMade: found?.attemptsMade };
      },
      (j) => j.finishedOn !== undefined,
      10_000,
    );
    return job.attemptsMade;
  };
  const runningRecords = async (id: string) =>
    (await api.get(`/v1/history/transaction/${id}`)).body.events.filter((e: any) => e.data.status === 'Running').length;

  beforeAll(async () => {
    apiServer = await startServer({ dataDir, entry: 'api', env });
    api = new Api(apiServer.url);
    await api.send('POST', '/v1/table/away/create', arrowStream(sampleTable(0, 300)), ARROW_STREAM);
    // The worker's CATALOG_URL: a port with nothing listening until the proxy there is restored.
    catalog = await startTcpProxy(Number(new URL(apiServer.url).port));
    await catalog.cut();
    worker = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: `http://127.0.0.1:${catalog.port}` } });
    queue = new Queue(QUEUES.indexBuilds, { connection: redisConnection(process.env.REDIS_URL!), prefix: env.QUEUE_PREFIX });
  });
  afterAll(async () => {
    await queue?.close();
    await worker?.stop();
    await catalog?.close();
    await apiServer?.stop();
  });

  it('waits for its catalog API, saying so in the transaction, and builds the index once the API answers', async () => {
    const queued = await api.post('/v1/table/away/create_index', { column: 'id', index_type: 'BTREE', name: 'id_idx' });
    const id = queued.body.transaction_id as string;
    const waiting = await waitFor(() => describeTx(id), (tx) => tx.properties.waiting_reason !== undefined, 30_000);
    expect(waiting.status).toBe('Running');
    expect(waiting.properties.waiting_reason).toMatch(/the catalog API is unreachable/);
    expect(Date.parse(waiting.properties.waiting_since)).toBeLessThanOrEqual(Date.parse(waiting.properties.next_attempt_at));
    // Still waiting a while later, after several attempts.
    await new Promise((r) => setTimeout(r, 4000));
    const later = await waitFor(() => describeTx(id), (tx) => tx.properties.waiting_reason !== undefined, 10_000);
    expect(later.status).toBe('Running');
    expect(later.properties.waiting_since).toBe(waiting.properties.waiting_since);
    expect(Date.parse(later.properties.next_attempt_at)).toBeGreaterThan(Date.parse(waiting.properties.next_attempt_at));

    await catalog.restore();
    const done = await settled(id, 30_000);
    expect(done.status).toBe('Succeeded');
    expect(Object.keys(done.properties).filter((k) => /^waiting_|^next_attempt/.test(k))).toEqual([]);
    // Waits are not attempts: the job ran once, as BullMQ counts.
    expect(await attemptsOnceFinished(id)).toBe(1);
  });

  it('fails a build whose catalog API never comes back once the horizon has passed, saying why', async () => {
    await catalog.cut();
    const started = Date.now();
    const queued = await api.post('/v1/table/away/create_scalar_index', { column: 'category', index_type: 'BITMAP', name: 'category_idx' });
    const failed = await settled(queued.body.transaction_id, 60_000);
    expect(failed.status).toBe('Failed');
    expect(failed.properties.reason).toMatch(/the catalog API is unreachable.*gave up after waiting 1\d s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(12_000);
  }, 90_000);

  it('fails a build Lance refuses after exactly one attempt', async () => {
    await catalog.restore();
    // k-means cannot make more partitions than the table has rows.
    const queued = await api.post('/v1/table/away/create_index', { column: 'vector', index_type: 'IVF_PQ', name: 'too_many', num_partitions: 1000, num_sub_vectors: 2 });
    const id = queued.body.transaction_id as string;
    const failed = await settled(id, 30_000);
    expect(failed.status).toBe('Failed');
    expect(failed.properties.reason.length).toBeGreaterThan(0);
    expect(await attemptsOnceFinished(id)).toBe(1);
    expect(await runningRecords(id)).toBe(1);
  });
});
