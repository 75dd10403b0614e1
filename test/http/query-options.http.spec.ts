import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

describe('QueryTable options', () => {
  let server: RunningServer;
  let api: Api;
  const rows = async (body: object) => {
    const res = await fetch(`${server.url}/v1/table/q/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    return arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer())).toArray().map((r) => r.toJSON());
  };
  const probe = Array.from({ length: 8 }, (_, d) => Math.sin(77 * (1 + d)));

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    await api.send('POST', '/v1/table/q/create', arrowStream(sampleTable(0, 1000)), ARROW_STREAM);
    for (const body of [
      { column: 'vector', index_type: 'IVF_PQ', num_partitions: 4, num_sub_vectors: 2 },
      { column: 'text', index_type: 'FTS', with_position: true },
    ]) {
      const { transaction_id } = (await api.post('/v1/table/q/create_index', body)).body;
      await waitFor(() => api.post(`/v1/transaction/${transaction_id}/describe`, {}), (r) => r.body.status === 'Succeeded');
    }
  });
  afterAll(() => server?.stop());

  it('refuses a vector holding both single_vector and multi_vector, on query, analysis and explanation', async () => {
    const vector = { single_vector: probe, multi_vector: [probe, probe] };
    for (const [path, body] of [
      ['/v1/table/q/query', { vector, k: 3 }],
      ['/v1/table/q/analyze_plan', { vector, k: 3 }],
      ['/v1/table/q/explain_plan', { query: { vector, k: 3 } }],
    ] as const) {
      const res = await api.post(path, body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 400, code: 13 });
      expect(res.body.error).toContain('not both');
    }
    // Either one alone is a query.
    expect(await rows({ vector: { single_vector: probe }, k: 3 })).toHaveLength(3);
    expect(await rows({ vector: { multi_vector: [probe] }, k: 3 })).toHaveLength(3);
  });

  it('honours the vector search tuning options', async () => {
    const exact = await rows({ vector: { single_vector: probe }, k: 5, bypass_vector_index: true, columns: { column_names: ['id'] } });
    expect(exact[0].id).toBe(77);
    const tuned = await rows({ vector: { single_vector: probe }, k: 5, nprobes: 4, refine_factor: 5, columns: { column_names: ['id'] } });
    expect(tuned[0].id).toBe(77);
    const cosine = await rows({ vector: { single_vector: probe }, k: 3, distance_type: 'cosine', bypass_vector_index: true, columns: { column_names: ['id'] } });
    expect(cosine).toHaveLength(3);
    const fast = await rows({ vector: { single_vector: probe }, k: 5, fast_search: true, columns: { column_names: ['id'] } });
    expect(fast.length).toBeGreaterThan(0);
  });

  it('bounds distances with lower_bound and upper_bound', async () => {
    const all = await rows({ vector: { single_vector: probe }, k: 50, bypass_vector_index: true, columns: { column_names: ['id'] } });
    const cut = all[10]._distance as number;
    const bounded = await rows({ vector: { single_vector: probe }, k: 50, bypass_vector_index: true, upper_bound: cut, columns: { column_names: ['id'] } });
    expect(bounded.length).toBeGreaterThan(0);
    for (const r of bounded) expect(r._distance as number).toBeLessThan(cut);
    const above = await rows({ vector: { single_vector: probe }, k: 5, bypass_vector_index: true, lower_bound: cut, columns: { column_names: ['id'] } });
    for (const r of above) expect(r._distance as number).toBeGreaterThanOrEqual(cut);
  });

  it('filters before or after the vector search', async () => {
    const pre = await rows({ vector: { single_vector: probe }, k: 5, filter: 'id >= 500', prefilter: true, columns: { column_names: ['id'] } });
    expect(pre).toHaveLength(5);
    for (const r of pre) expect(r.id as number).toBeGreaterThanOrEqual(500);
    const post = await rows({ vector: { single_vector: probe }, k: 5, filter: 'id >= 500', prefilter: false, columns: { column_names: ['id'] } });
    for (const r of post) expect(r.id as number).toBeGreaterThanOrEqual(500);
  });

  it('runs structured full-text queries', async () => {
    const match = await rows({ k: 10, full_text_query: { structured_query: { query: { match: { terms: 'banana', column: 'text' } } } }, columns: { column_names: ['text'] } });
    expect(match.length).toBe(10);
    for (const r of match) expect(String(r.text)).toContain('banana');
    const phrase = await rows({ k: 5, full_text_query: { structured_query: { query: { phrase: { terms: 'pie number 42', column: 'text' } } } }, columns: { column_names: ['id'] } });
    expect(phrase.map((r) => r.id)).toContain(42);
    const boolean = await rows({
      k: 50,
      full_text_query: {
        structured_query: {
          query: {
            boolean: {
              must: [{ match: { terms: 'apple', column: 'text' } }],
              must_not: [{ match: { terms: '5', column: 'text' } }],
              should: [],
            },
          },
        },
      },
      columns: { column_names: ['text'] },
    });
    for (const r of boolean) expect(String(r.text)).toContain('apple');
    const bad = await api.post('/v1/table/q/query', { k: 5, full_text_query: { structured_query: { query: { match: { terms: 'x', column: 'text' }, phrase: { terms: 'y', column: 'text' } } } } });
    expect([bad.status, bad.body.code]).toEqual([400, 13]);
  });
});
