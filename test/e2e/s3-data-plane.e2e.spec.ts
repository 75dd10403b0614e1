import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';

const BUCKET = 'warehouse';

/**
 * The HTTP data plane with the warehouse on a real S3 server (Swift): every operation that touches
 * table files works on objects, index builds included, and nothing of a table lands on local disk.
 */
describe('the data plane on an S3 warehouse (Swift)', () => {
  let swift: SwiftServer;
  let server: RunningServer;
  let api: Api;

  const objects = async (prefix: string) => {
    const listed = await swift.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (listed.Contents ?? []).map((o) => o.Key!);
  };
  const settle = (transactionId: string) =>
    waitFor(
      () => api.post(`/v1/transaction/${transactionId}/describe`, {}),
      (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status),
      120_000,
    ).then((r) => r.body);

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket(BUCKET);
    server = await startServer({ env: { ...swift.awsEnv(), WAREHOUSE: `s3://${BUCKET}/lance`, DROP_RETENTION_SECONDS: '0' } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/shop/create', {})).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await swift?.stop();
  });

  it('creates a table on the object store and answers its s3:// location', async () => {
    const created = await api.send<any>('POST', '/v1/table/shop%24items/create', arrowStream(sampleTable(0, 300)), ARROW_STREAM);
    expect(created.status).toBe(200);
    expect(created.body.location).toMatch(/^s3:\/\/warehouse\/lance\/default\/shop\/items-[0-9a-f]{12}\.lance$/);
    const key = created.body.location.replace('s3://warehouse/', '');
    expect((await objects(`${key}/_versions/`)).some((k) => k.endsWith('.manifest'))).toBe(true);
    expect((await objects(`${key}/data/`)).length).toBeGreaterThan(0);
    expect((await api.post('/v1/table/shop%24items/count_rows', {})).body).toBe(300);
  });

  it('inserts, counts, queries, mutates, merges and restores through the object store', async () => {
    expect((await api.send('POST', '/v1/table/shop%24items/insert', arrowStream(sampleTable(300, 100)), ARROW_STREAM)).status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/count_rows', { predicate: 'id >= 300' })).body).toBe(100);
    const query = await api.post('/v1/table/shop%24items/query', { vector: { single_vector: Array.from(sampleTable(7, 1).getChild('vector')!.get(0)!.toArray()) }, k: 3 });
    expect(query.status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/update', { predicate: 'id < 10', updates: [['category', "'updated'"]] })).status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/delete', { predicate: 'id >= 390' })).status).toBe(200);
    const merged = await api.send(
      'POST',
      '/v1/table/shop%24items/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true',
      arrowStream(sampleTable(385, 10)),
      ARROW_STREAM,
    );
    expect(merged.status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/count_rows', {})).body).toBe(395);
    expect((await api.post('/v1/table/shop%24items/add_columns', { new_columns: [{ name: 'double_id', expression: 'id * 2' }] })).status).toBe(200);
    const stats = await api.post('/v1/table/shop%24items/stats', {});
    expect(stats.status).toBe(200);
    const detailed = await api.post('/v1/table/shop%24items/describe', { load_detailed_metadata: true });
    expect(detailed.body.stats.num_fragments).toBeGreaterThan(0);
    expect(detailed.body.stats.num_deleted_rows).toBeGreaterThan(0);
    const restored = await api.post('/v1/table/shop%24items/restore', { version: 1 });
    expect(restored.status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/count_rows', {})).body).toBe(300);
  });

  it('tags versions of a table on the object store', async () => {
    expect((await api.post('/v1/table/shop%24items/tags/create', { tag: 'first', version: 1 })).status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/tags/version', { tag: 'first' })).body.version).toBe(1);
    expect((await api.post('/v1/table/shop%24items/tags/list', {})).body.tags).toHaveProperty('first');
    expect((await api.post('/v1/table/shop%24items/tags/delete', { tag: 'first' })).status).toBe(200);
  });

  it('builds every kind of index in the workers, HNSW graphs as objects beside the table', async () => {
    const builds = [
      { column: 'id', index_type: 'BTREE', name: 'id_idx' },
      { column: 'category', index_type: 'BITMAP', name: 'cat_idx' },
      { column: 'labels', index_type: 'LABEL_LIST', name: 'labels_idx' },
      { column: 'text', index_type: 'FTS', name: 'text_idx' },
      { column: 'vector', index_type: 'IVF_PQ', name: 'pq_idx', num_partitions: 2, num_sub_vectors: 2 },
      { column: 'vector', index_type: 'HNSW', name: 'graph_idx' },
    ];
    for (const build of builds) {
      const res = await api.post('/v1/table/shop%24items/create_index', build);
      expect(res.status).toBe(200);
      const done = await settle(res.body.transaction_id);
      expect({ name: build.name, status: done.status, reason: done.properties?.reason }).toEqual({ name: build.name, status: 'Succeeded', reason: undefined });
    }
    const listed = await api.post('/v1/table/shop%24items/index/list', {});
    expect(listed.body.indexes.map((i: { index_name: string }) => i.index_name).sort()).toEqual(builds.map((b) => b.name).sort());
    const location = (await api.post('/v1/table/shop%24items/describe', {})).body.location as string;
    const key = location.replace('s3://warehouse/', '');
    expect((await objects(`${key}/_hnsw/`)).sort()).toEqual(['graph_idx.bin', 'graph_idx.json', 'graph_idx.rowids'].map((n) => `${key}/_hnsw/${n}`));
    const probe = Array.from(sampleTable(42, 1).getChild('vector')!.get(0)!.toArray());
    const plan = await api.post('/v1/table/shop%24items/analyze_plan', { vector: { single_vector: probe }, k: 5 });
    expect(plan.status).toBe(200);
    // Analysis runs in the worker, which loads the graph from the object store.
    expect(plan.body).toContain('HnswSearch: index=graph_idx');
    expect(plan.body).toMatch(/graph: 300 rows as of version \d+/);
    const explained = await api.post('/v1/table/shop%24items/explain_plan', { query: { vector: { single_vector: probe }, k: 5 } });
    expect(explained.body).toContain(`graph built by hnswlib-node at ${location}/_hnsw/graph_idx.bin`);
    const hits = await api.post('/v1/table/shop%24items/query', { vector: { single_vector: probe }, k: 1, columns: { column_names: ['id'] } });
    expect(hits.status).toBe(200);
    const stats = await api.post('/v1/table/shop%24items/index/graph_idx/stats', {});
    expect(stats.status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/index/graph_idx/drop', {})).status).toBe(200);
    expect(await objects(`${key}/_hnsw/`)).toEqual([]);
  });

  it('registers a table already on the object store, importing its versions, and deregisters it keeping its objects', async () => {
    const before = await api.post('/v1/table/shop%24items/version/list', {});
    const location = (await api.post('/v1/table/shop%24items/describe', {})).body.location as string;
    expect((await api.post('/v1/table/shop%24items/deregister', {})).status).toBe(200);
    const registered = await api.post('/v1/table/shop%24again/register', { location });
    expect(registered.status).toBe(200);
    expect(registered.body.location).toBe(location);
    expect(registered.body.storage_options.aws_endpoint).toBe(swift.endpoint);
    const after = await api.post('/v1/table/shop%24again/version/list', {});
    expect(after.body.versions.map((v: { version: number }) => v.version)).toEqual(before.body.versions.map((v: { version: number }) => v.version));
    expect((await api.post('/v1/table/shop%24again/count_rows', {})).body).toBe(300);
  });

  it('keeps nothing of a table on the local disk: DATA_DIR holds the event store and snapshots only', () => {
    const kept = readdirSync(server.dataDir).filter((n) => !n.startsWith('events.sqlite3') && n !== 'snapshots');
    expect(kept).toEqual([]);
    expect(existsSync(join(server.dataDir, 'warehouse'))).toBe(false);
  });

  it('purges a dropped table\'s objects, keeping its history', async () => {
    const location = (await api.post('/v1/table/shop%24again/describe', {})).body.location as string;
    const key = location.replace('s3://warehouse/', '');
    expect((await objects(`${key}/`)).length).toBeGreaterThan(10);
    expect((await api.post('/v1/table/shop%24again/drop', {})).status).toBe(200);
    await waitFor(() => objects(`${key}/`), (left) => left.length === 0, 60_000);
    const history = await waitFor(
      () => api.get('/v1/history/table/shop%24again'),
      (r) => r.body.events.some((e: { type: string }) => e.type === 'TablePurged'),
      10_000,
    );
    expect(history.body.events.map((e: { type: string }) => e.type).slice(-3)).toEqual(['TableDropped', 'TablePurgeScheduled', 'TablePurged']);
  });

  it('refuses locations outside the warehouse bucket and prefix', async () => {
    const otherDatabase = api.withHeaders({ 'x-lance-database': 'other' });
    await otherDatabase.post('/v1/namespace/o/create', {});
    const theirs = (await otherDatabase.send<any>('POST', '/v1/table/o%24t/create', arrowStream(sampleTable(0, 5)), ARROW_STREAM)).body.location;
    for (const location of [
      's3://other-bucket/lance/t.lance',
      's3://warehouse/elsewhere/t.lance',
      's3://warehouse/lance/../x/t.lance',
      '/tmp/t.lance',
      'gs://warehouse/lance/t.lance',
      // Another database's table and folder in the same bucket.
      theirs,
      's3://warehouse/lance/other',
      's3://warehouse/lance/default/../other/o/t.lance',
    ]) {
      const res = await api.post('/v1/table/shop%24outside/declare', { location });
      expect({ location, status: res.status, code: res.body.code }).toEqual({ location, status: 400, code: 13 });
      const registered = await api.post('/v1/table/shop%24outside/register', { location });
      expect({ location, status: registered.status, code: registered.body.code }).toEqual({ location, status: 400, code: 13 });
    }
  });
  it('keeps branches on the object store: each branch under tree/<name>, its ref file beside the tags, both gone when deleted', async () => {
    const T = '/v1/table/shop%24branched';
    const created = await api.send<any>('POST', `${T}/create`, arrowStream(sampleTable(0, 20)), ARROW_STREAM);
    expect(created.status).toBe(200);
    const key = created.body.location.replace('s3://warehouse/', '');
    expect((await api.post(`${T}/branches/create`, { name: 'dev' })).status).toBe(200);
    expect((await api.send('POST', `${T}/insert?branch=dev`, arrowStream(sampleTable(20, 5)), ARROW_STREAM)).status).toBe(200);
    expect((await api.post(`${T}/count_rows`, {})).body).toBe(20);
    expect((await api.post(`${T}/count_rows`, { branch: 'dev' })).body).toBe(25);
    expect((await api.post(`${T}/branches/create`, { name: 'child', from_branch: 'dev' })).status).toBe(200);
    expect((await api.post(`${T}/count_rows`, { branch: 'child' })).body).toBe(25);
    expect((await objects(`${key}/tree/dev/_versions/`)).filter((k) => /\d{20}\.manifest$/.test(k))).toHaveLength(2);
    expect(await objects(`${key}/_refs/branches/`)).toEqual([`${key}/_refs/branches/child.json`, `${key}/_refs/branches/dev.json`]);
    expect(Object.keys((await api.post(`${T}/branches/list`, null)).body.branches)).toEqual(['child', 'dev']);
    // The ref files the catalog wrote (Swift refuses Lance's conditional PUT) are ones the lancedb client reads as its own.
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    try {
      const storageOptions = swift.storageOptions();
      const listed = await (await (await db.openTable('branched', ['shop'], { storageOptions })).branches()).list();
      expect(Object.keys(listed).sort()).toEqual(['child', 'dev']);
      expect(listed.child.parentBranch).toBe('dev');
      expect(await (await db.openTable('branched', ['shop'], { branch: 'child', storageOptions })).countRows()).toBe(25);
    } finally {
      db.close();
    }
    expect((await api.post(`${T}/branches/delete`, { name: 'child' })).status).toBe(200);
    expect(await objects(`${key}/tree/child/`)).toEqual([]);
    expect(await objects(`${key}/_refs/branches/`)).toEqual([`${key}/_refs/branches/dev.json`]);
    expect((await api.post(`${T}/count_rows`, { branch: 'dev' })).body).toBe(25);
  }, 120_000);
});
