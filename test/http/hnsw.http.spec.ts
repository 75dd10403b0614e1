import * as arrow from 'apache-arrow';
import { readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

describe('the standalone HNSW index (hnswlib-node)', () => {
  let server: RunningServer;
  let api: Api;
  const query = async (body: object) => {
    const res = await fetch(`${server.url}/v1/table/h/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    return arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  };
  const probe = Array.from({ length: 8 }, (_, d) => Math.sin(1234.5 * (1 + d)));

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    await api.send('POST', '/v1/table/h/create', arrowStream(sampleTable(0, 2000)), ARROW_STREAM);
  });
  afterAll(() => server?.stop());

  it('builds on a worker and answers like an exact search', async () => {
    const res = await api.post('/v1/table/h/create_index', { column: 'vector', index_type: 'HNSW', name: 'graph', m: 16, ef_construction: 200 });
    expect(res.status).toBe(200);
    const done = await waitFor(() => api.post(`/v1/transaction/${res.body.transaction_id}/describe`, {}), (r) => ['Succeeded', 'Failed'].includes(r.body.status));
    expect(done.body).toMatchObject({ status: 'Succeeded', properties: { indexed_rows: '2000' } });

    const viaGraph = await query({ vector: { single_vector: probe }, k: 10, columns: { column_names: ['id'] } });
    const exact = await query({ vector: { single_vector: probe }, k: 10, columns: { column_names: ['id'] }, bypass_vector_index: true });
    const ids = (t: arrow.Table) => t.toArray().map((r) => r.id as number);
    const overlap = ids(viaGraph).filter((id) => ids(exact).includes(id)).length;
    expect(overlap).toBeGreaterThanOrEqual(9);
    expect(viaGraph.schema.fields.map((f) => f.name)).toEqual(['id', '_distance']);
    const distances = viaGraph.toArray().map((r) => r._distance as number);
    expect([...distances].sort((a, b) => a - b)).toEqual(distances);

    const plan = await api.post('/v1/table/h/analyze_plan', { vector: { single_vector: probe }, k: 10 });
    expect(plan.body).toContain('HnswSearch');
    const stats = await api.post('/v1/table/h/index/graph/stats', {});
    expect(stats.body).toMatchObject({ index_type: 'HNSW', num_indexed_rows: 2000, num_unindexed_rows: 0 });
  });

  it('answers up to 1,000 rows from the graph in distance order, with every column, and a larger answer from Lance', async () => {
    const ids = (t: arrow.Table) => t.toArray().map((r) => r.id as number);
    const wide = await query({ vector: { single_vector: probe }, k: 1000 });
    expect(wide.numRows).toBe(1000);
    expect(wide.schema.fields.map((f) => f.name)).toEqual([...sampleTable(0, 1).schema.fields.map((f) => f.name), '_distance']);
    const distances = wide.toArray().map((r) => r._distance as number);
    expect([...distances].sort((a, b) => a - b)).toEqual(distances);
    // Each row is whole: its vector is the one its id was written with.
    const written = sampleTable(0, 2000);
    for (const i of [0, 499, 999]) {
      const row = wide.get(i)!;
      expect(Array.from(row.vector as Float32Array)).toEqual(Array.from(written.get(row.id as number)!.vector as Float32Array));
    }
    expect((await api.post('/v1/table/h/analyze_plan', { vector: { single_vector: probe }, k: 1000 })).body).toContain('HnswSearch');
    // Past 1,000 rows (k + offset) the graph is not searched: Lance's own search answers, exactly.
    const past = await api.post('/v1/table/h/analyze_plan', { vector: { single_vector: probe }, k: 1001 });
    expect(past.body).not.toContain('HnswSearch');
    const large = await query({ vector: { single_vector: probe }, k: 1500, columns: { column_names: ['id'] } });
    const exact = await query({ vector: { single_vector: probe }, k: 1500, columns: { column_names: ['id'] }, bypass_vector_index: true });
    expect(ids(large)).toEqual(ids(exact));
    expect((await api.post('/v1/table/h/analyze_plan', { vector: { single_vector: probe }, k: 600, offset: 401 })).body).not.toContain('HnswSearch');
  });

  it('stores the row ids as 64-bit integers, and still reads a graph whose row ids are decimal strings in its JSON', async () => {
    const location = (await api.post('/v1/table/h/describe', {})).body.location;
    const bytes = readFileSync(`${location}/_hnsw/graph.rowids`);
    expect(bytes.byteLength).toBe(2000 * 8);
    const meta = JSON.parse(readFileSync(`${location}/_hnsw/graph.json`, 'utf8'));
    expect(meta).toMatchObject({ column: 'vector', rows: 2000 });
    expect(meta.rowIds).toBeUndefined();
    const before = await query({ vector: { single_vector: probe }, k: 10, columns: { column_names: ['id'] } });

    // The format graphs were written in before: every row id a decimal string in the JSON.
    const ids = new BigUint64Array(bytes.byteLength / 8);
    new Uint8Array(ids.buffer).set(bytes);
    const { rows: _rows, ...rest } = meta;
    writeFileSync(`${location}/_hnsw/graph.json`, JSON.stringify({ ...rest, rowIds: Array.from(ids, String) }));
    rmSync(`${location}/_hnsw/graph.rowids`);
    // A new modification time makes the server load the graph again.
    const later = new Date(Date.now() + 5000);
    utimesSync(`${location}/_hnsw/graph.bin`, later, later);
    const after = await query({ vector: { single_vector: probe }, k: 10, columns: { column_names: ['id'] } });
    expect(after.getChild('id')!.toArray()).toEqual(before.getChild('id')!.toArray());
    expect((await api.post('/v1/table/h/index/graph/stats', {})).body).toMatchObject({ num_indexed_rows: 2000, num_unindexed_rows: 0 });
  });

  it('still finds rows written after the build', async () => {
    const near = sampleTable(5000, 1);
    const vector = Array.from(near.getChild('vector')!.get(0) as Float32Array);
    await api.send('POST', '/v1/table/h/insert', arrowStream(near), ARROW_STREAM);
    const found = await query({ vector: { single_vector: vector }, k: 3, columns: { column_names: ['id'] }, with_row_id: true });
    expect(found.getChild('id')!.get(0)).toBe(5000);
    expect(found.schema.fields.map((f) => f.name)).toContain('_rowid');
    const stats = await api.post('/v1/table/h/index/graph/stats', {});
    expect(stats.body.num_unindexed_rows).toBe(1);
  });

  it('does not return deleted rows, and drops cleanly', async () => {
    const first = await query({ vector: { single_vector: probe }, k: 1, columns: { column_names: ['id'] } });
    const top = first.getChild('id')!.get(0) as number;
    await api.post('/v1/table/h/delete', { predicate: `id = ${top}` });
    const after = await query({ vector: { single_vector: probe }, k: 10, columns: { column_names: ['id'] } });
    expect(after.toArray().map((r) => r.id)).not.toContain(top);
    expect(after.numRows).toBe(10);
    expect((await api.post('/v1/table/h/index/graph/drop', {})).status).toBe(200);
    expect((await api.post('/v1/table/h/index/list', {})).body.indexes).toEqual([]);
  });

  it('keeps answering while a large graph builds: the build runs off the event loop', async () => {
    // 20,000 rows of 64 dimensions: hnswlib needs seconds for this graph.
    await api.send('POST', '/v1/table/big/create', arrowStream(sampleTable(0, 20_000, 64)), ARROW_STREAM);
    const started = Date.now();
    const res = await api.post('/v1/table/big/create_index', { column: 'vector', index_type: 'HNSW', name: 'graph', m: 16, ef_construction: 200 });
    let slowest = 0;
    let tx: any;
    for (;;) {
      const asked = Date.now();
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      slowest = Math.max(slowest, Date.now() - asked);
      tx = (await api.post(`/v1/transaction/${res.body.transaction_id}/describe`, {})).body;
      if (['Succeeded', 'Failed'].includes(tx.status)) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(tx).toMatchObject({ status: 'Succeeded', properties: { indexed_rows: '20000', attempt: '1' } });
    expect(Date.now() - started).toBeGreaterThan(1000);
    expect(slowest).toBeLessThan(500);
    const hits = await fetch(`${server.url}/v1/table/big/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: { single_vector: Array.from(sampleTable(777, 1, 64).getChild('vector')!.get(0) as Float32Array) }, k: 1, columns: { column_names: ['id'] } }),
    });
    expect(arrow.tableFromIPC(new Uint8Array(await hits.arrayBuffer())).getChild('id')!.get(0)).toBe(777);
  }, 120_000);

  it('refuses a graph over a column that holds no vectors, before queueing anything', async () => {
    const res = await api.post('/v1/table/h/create_index', { column: 'id', index_type: 'HNSW', name: 'ids' });
    expect([res.status, res.body.code]).toEqual([400, 13]);
    expect(res.body.error).toContain("cannot be built on column 'id'");
    expect((await api.post('/v1/table/h/index/list', {})).body.indexes).toEqual([]);
  });
});
