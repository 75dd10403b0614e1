/** The fields of the data operations: rows in, rows out, plans (see coverage.ts for the tokens). */
import * as arrow from 'apache-arrow';
import { ARROW, NS, T, arrowStream, count, createTable, expectError, ids, ok, query, rows, settled, suiteServer } from './fixtures';
import { covers } from './coverage';

/** `id` and `score` columns, every score the same. */
const scored = (idList: number[], score: number) =>
  new arrow.Table({ id: arrow.vectorFromArray(Int32Array.from(idList)), score: arrow.vectorFromArray(Float64Array.from(idList.map(() => score))) });
const v = (x: number) => [x, x, x, x];

describe('data operations, field by field', () => {
  const s = suiteServer();
  const api = () => s.api;
  const q = (id: string[], body: object) => query(s.url, id, body);
  const plan = async (body: object) => (await ok(api().post(`${T('d', 'items')}/analyze_plan`, body))).body as string;

  beforeAll(async () => {
    await ok(api().post(`${NS('d')}/create`, {}));
    await createTable(api(), ['d', 'items'], rows(0, 300));
    await createTable(api(), ['d', 'fast'], rows(0, 100));
    await createTable(api(), ['d', 'hnsw'], rows(0, 100));
    const two = rows(0, 20);
    await createTable(api(), ['d', 'two'], new arrow.Table({ ...Object.fromEntries(two.schema.fields.map((f) => [f.name, two.getChild(f.name)!])), other: negated(20) }));
    await createTable(api(), ['d', 'ver'], rows(0, 3));
    await ok(api().send('POST', `${T('d', 'ver')}/insert`, arrowStream(rows(3, 2)), ARROW));
    const builds = await Promise.all([
      api().post(`${T('d', 'items')}/create_index`, { column: 'vector', index_type: 'IVF_PQ', num_partitions: 4, num_sub_vectors: 2 }),
      api().post(`${T('d', 'fast')}/create_index`, { column: 'vector', index_type: 'IVF_FLAT', num_partitions: 2 }),
      api().post(`${T('d', 'hnsw')}/create_index`, { column: 'vector', index_type: 'IVF_HNSW_SQ', num_partitions: 1 }),
    ]);
    for (const b of builds) expect((await settled(api(), b.body.transaction_id)).status).toBe('Succeeded');
    // FTS after the vector index: one build per table at a time.
    expect((await settled(api(), (await ok(api().post(`${T('d', 'items')}/create_index`, { column: 'name', index_type: 'FTS' }))).body.transaction_id)).status).toBe('Succeeded');
    // Rows written after the build: not in the index.
    await ok(api().send('POST', `${T('d', 'fast')}/insert`, arrowStream(rows(100, 5)), ARROW));
  }, 60_000);

  // --- QueryTable -----------------------------------------------------------------------------

  covers(['QueryTable#200', 'QueryTable.k', 'QueryTable.vector', 'QueryTable.vector.single_vector'], 'answers the k nearest rows to the vector as an Arrow IPC file; no vector is a plain scan', async () => {
    const near = await q(['d', 'items'], { k: 3, vector: { single_vector: v(41) }, bypass_vector_index: true, columns: { column_names: ['id'] } });
    expect(near.rows.map((r) => r.id)).toEqual([41, 40, 42]);
    expect(near.columns).toEqual(['id', '_distance']);
    expect(await ids(s.url, ['d', 'items'], { k: 3, vector: v(41), bypass_vector_index: true })).toEqual([41, 40, 42]);
    expect(await ids(s.url, ['d', 'items'], { k: 5, vector: v(41), bypass_vector_index: true })).toHaveLength(5);
    const scan = await q(['d', 'items'], { k: 4, vector: [] });
    expect(scan.rows).toHaveLength(4);
    expect(scan.columns).toEqual(['id', 'name', 'score', 'vector']);
    expect((await q(['d', 'items'], { k: 0, vector: [] })).rows).toEqual([]);
  });

  covers(['QueryTable.offset'], 'skips the first rows of the answer', async () => {
    const all = await ids(s.url, ['d', 'items'], { k: 6, vector: v(10), bypass_vector_index: true });
    expect(await ids(s.url, ['d', 'items'], { k: 4, offset: 2, vector: v(10), bypass_vector_index: true })).toEqual(all.slice(2, 6));
    expect(await ids(s.url, ['d', 'items'], { k: 2, offset: 5, vector: [] })).toEqual([5, 6]);
  });

  covers(['QueryTable.filter', 'QueryTable.prefilter'], 'answers only rows the filter holds for; prefilter filters before the search, else after it (fewer rows)', async () => {
    expect(await ids(s.url, ['d', 'items'], { k: 5, vector: [], filter: 'id % 100 = 7' })).toEqual([7, 107, 207]);
    expect(await ids(s.url, ['d', 'items'], { k: 3, vector: v(1), filter: 'id >= 50', prefilter: true, bypass_vector_index: true })).toEqual([50, 51, 52]);
    expect(await ids(s.url, ['d', 'items'], { k: 3, vector: v(1), filter: 'id >= 50', prefilter: false, bypass_vector_index: true })).toEqual([]);
  });

  covers(['QueryTable.columns', 'QueryTable.columns.column_names', 'QueryTable.columns.column_aliases'], 'answers exactly the columns named, or the aliases with their expressions', async () => {
    const named = await q(['d', 'items'], { k: 2, vector: [], columns: { column_names: ['score', 'id'] } });
    expect(named.columns).toEqual(['score', 'id']);
    expect(named.rows).toEqual([{ score: 0, id: 0 }, { score: 0.5, id: 1 }]);
    const aliased = await q(['d', 'items'], { k: 2, vector: [], filter: 'id >= 10', columns: { column_aliases: { twice: 'id * 2', label: "concat('#', name)" } } });
    expect(aliased.columns).toEqual(['twice', 'label']);
    expect(aliased.rows).toEqual([{ twice: 20, label: '#n10' }, { twice: 22, label: '#n11' }]);
  });

  covers(['QueryTable.with_row_id'], 'adds the _rowid column only when asked', async () => {
    expect((await q(['d', 'items'], { k: 2, vector: [], columns: { column_names: ['id'] } })).columns).toEqual(['id']);
    const withIds = await q(['d', 'items'], { k: 2, vector: [], columns: { column_names: ['id'] }, with_row_id: true });
    expect(withIds.columns).toEqual(['id', '_rowid']);
    expect(withIds.rows.map((r) => Number(r._rowid))).toEqual([0, 1]);
  });

  covers(['QueryTable.distance_type'], 'measures with the metric asked for: l2 by default, cosine (collinear rows at 0), dot', async () => {
    const with_ = async (distance_type?: string) =>
      (await q(['d', 'items'], { k: 3, vector: v(2), bypass_vector_index: true, columns: { column_names: ['id'] }, ...(distance_type ? { distance_type } : {}) })).rows;
    expect(await with_()).toEqual([{ id: 2, _distance: 0 }, expect.objectContaining({ _distance: 4 }), expect.objectContaining({ _distance: 4 })]);
    expect((await with_('cosine')).map((r) => Math.round(r._distance * 1e4))).toEqual([0, 0, 0]);
    // Lance's dot distance is 1 - a·b: the largest products first.
    expect(await with_('dot')).toEqual([{ id: 299, _distance: 1 - 8 * 299 }, { id: 298, _distance: 1 - 8 * 298 }, { id: 297, _distance: 1 - 8 * 297 }]);
  });

  covers(['QueryTable.nprobes'], 'searches as many IVF partitions as asked: more probes, more of the 300 rows reachable', async () => {
    const reach = async (nprobes: number) => (await ids(s.url, ['d', 'items'], { k: 300, vector: v(150), nprobes })).length;
    const [one, two, all] = [await reach(1), await reach(2), await reach(4)];
    expect(one).toBeLessThan(two);
    expect(two).toBeLessThan(all);
    expect(all).toBe(300);
  });

  covers(['QueryTable.refine_factor'], "re-ranks refine_factor times k candidates by their exact distances", async () => {
    const distances = async (extra: object) => (await q(['d', 'items'], { k: 3, vector: v(7.3), columns: { column_names: ['id'] }, ...extra })).rows.map((r) => r._distance);
    expect(await distances({ refine_factor: 2 })).toEqual(await distances({ bypass_vector_index: true }));
    const explained = (await ok(api().post(`${T('d', 'items')}/explain_plan`, { query: { k: 3, vector: v(7.3), refine_factor: 2 } }))).body;
    expect(explained).toMatch(/KNNVectorDistance[\s\S]*ANNSubIndex: name=vector_idx, k=6/);
  });

  covers(['QueryTable.bypass_vector_index'], 'searches every row exactly, not the index', async () => {
    expect((await ids(s.url, ['d', 'items'], { k: 300, vector: v(150), nprobes: 1 })).length).toBeLessThan(300);
    const exact = await q(['d', 'items'], { k: 300, vector: v(150), nprobes: 1, bypass_vector_index: true, columns: { column_names: ['id'] } });
    expect(exact.rows).toHaveLength(300);
    expect(exact.rows[0]).toEqual({ id: 150, _distance: 0 });
  });

  covers(['QueryTable.fast_search'], 'searches the index alone: rows written since its build are not found', async () => {
    expect(await ids(s.url, ['d', 'fast'], { k: 3, vector: v(103) })).toEqual([103, 102, 104]);
    const indexedOnly = await ids(s.url, ['d', 'fast'], { k: 3, vector: v(103), fast_search: true });
    expect(indexedOnly).toEqual([99, 98, 97]);
  });

  covers(['QueryTable.ef'], "gives the HNSW search the breadth asked for: at least k (Lance refuses less), then k rows", async () => {
    expect(await ids(s.url, ['d', 'hnsw'], { k: 20, vector: v(50), ef: 40 })).toHaveLength(20);
    expectError(await api().post(`${T('d', 'hnsw')}/query`, { k: 20, vector: v(50), ef: 5 }), 400, 13);
    expect(await ids(s.url, ['d', 'hnsw'], { k: 20, vector: v(50) })).toHaveLength(20);
  });

  covers(['QueryTable.lower_bound', 'QueryTable.upper_bound'], 'answers only rows whose distance lies from lower_bound (included) to upper_bound (excluded)', async () => {
    const bounded = await q(['d', 'items'], { k: 10, vector: v(1), bypass_vector_index: true, lower_bound: 4, upper_bound: 40, columns: { column_names: ['id'] } });
    expect(bounded.rows.map((r) => r._distance)).toEqual([4, 4, 16, 36]);
    expect((await q(['d', 'items'], { k: 10, vector: v(1), bypass_vector_index: true, upper_bound: 5, columns: { column_names: ['id'] } })).rows.map((r) => r.id).sort()).toEqual([0, 1, 2]);
  });

  covers(['QueryTable.vector.multi_vector'], 'searches for each vector, answering which one each row is for (query_index)', async () => {
    const both = await q(['d', 'items'], { k: 2, vector: { multi_vector: [v(1), v(50)] }, bypass_vector_index: true, columns: { column_names: ['id'] } });
    expect(both.columns).toEqual(['query_index', 'id', '_distance']);
    expect(both.rows.map((r) => [r.query_index, r.id])).toEqual([
      [0, 1],
      [0, expect.any(Number)],
      [1, 50],
      [1, expect.any(Number)],
    ]);
  });

  covers(['QueryTable.vector_column'], 'searches the vector column named', async () => {
    expect(await ids(s.url, ['d', 'two'], { k: 1, vector: v(-5), vector_column: 'other' })).toEqual([5]);
    expect(await ids(s.url, ['d', 'two'], { k: 1, vector: v(-5), vector_column: 'vector' })).toEqual([0]);
  });

  covers(
    ['QueryTable.full_text_query', 'QueryTable.full_text_query.string_query', 'QueryTable.full_text_query.structured_query'],
    'searches the full-text index: a string query (in the columns named), or a structured one',
    async () => {
      const found = await q(['d', 'items'], { k: 5, vector: [], full_text_query: { string_query: { query: 'n42' } }, columns: { column_names: ['id'] } });
      expect(found.columns).toEqual(['id', '_score']);
      expect(found.rows.map((r) => r.id)).toEqual([42]);
      expect(await ids(s.url, ['d', 'items'], { k: 5, vector: [], full_text_query: { string_query: { query: 'n43', columns: ['name'] } } })).toEqual([43]);
      expect(await ids(s.url, ['d', 'items'], { k: 5, vector: [], full_text_query: { structured_query: { query: { match: { terms: 'n44', column: 'name' } } } } })).toEqual([44]);
      const fuzzy = await ids(s.url, ['d', 'items'], { k: 20, vector: [], full_text_query: { structured_query: { query: { match: { terms: 'n4', column: 'name', fuzziness: 1 } } } } });
      expect(fuzzy).toEqual(expect.arrayContaining([4, 5, 40]));
    },
  );

  covers(['QueryTable.version'], 'reads the version asked for', async () => {
    expect(await ids(s.url, ['d', 'ver'], { k: 10, vector: [], version: 1 })).toEqual([0, 1, 2]);
    expect(await ids(s.url, ['d', 'ver'], { k: 10, vector: [] })).toEqual([0, 1, 2, 3, 4]);
    expectError(await api().post(`${T('d', 'ver')}/query`, { k: 10, vector: [], version: 9 }), 404, 11);
  });

  // --- CountTableRows, plans --------------------------------------------------------------------

  covers(['CountTableRows#200', 'CountTableRows.predicate', 'CountTableRows.version'], 'counts the rows (the predicate holds for, at the version asked for) as a bare integer', async () => {
    const res = await ok(api().post(`${T('d', 'ver')}/count_rows`, {}));
    expect([res.text, res.headers.get('content-type')]).toEqual(['5', expect.stringMatching(/^application\/json/)]);
    expect(await count(api(), ['d', 'ver'], { predicate: 'id >= 2' })).toBe(3);
    expect(await count(api(), ['d', 'ver'], { version: 1 })).toBe(3);
    expect(await count(api(), ['d', 'ver'], { version: 1, predicate: 'id >= 2' })).toBe(1);
  });

  covers(['ExplainTableQueryPlan#200', 'ExplainTableQueryPlan.query', 'ExplainTableQueryPlan.verbose'], 'explains the plan of the query as a bare JSON string; verbose adds the columns it answers', async () => {
    const res = await ok(api().post(`${T('d', 'items')}/explain_plan`, { query: { k: 7, vector: [], filter: 'id > 42', columns: { column_names: ['id', 'score'] } } }));
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(typeof JSON.parse(res.text)).toBe('string');
    expect(res.body).toMatch(/full_filter=id > Int32\(42\)/);
    expect(res.body).toMatch(/0\.\.7/);
    expect(res.body).not.toMatch(/Output schema/);
    const verbose = (await ok(api().post(`${T('d', 'items')}/explain_plan`, { query: { k: 7, vector: [], columns: { column_names: ['id', 'score'] } }, verbose: true }))).body;
    expect(verbose).toMatch(/Output schema:\n {2}id: Int32 not null\n {2}score: Float64 not null\n$/);
  });

  covers(['AnalyzeTableQueryPlan#200'], 'runs the query and answers its plan with what each step did', async () => {
    const text = await plan({ k: 5, vector: v(3) });
    expect(text).toMatch(/^AnalyzeExec/);
    expect(text).toMatch(/ProjectionExec: .*metrics=\[output_rows=5/);
  });

  // Each field of an analysed query shows in the plan Lance ran: with it, the plan holds `shows`; without it, not.
  const ANALYZED: Array<[string[], object, RegExp, object?]> = [
    [['AnalyzeTableQueryPlan.k'], { k: 7, vector: [] }, /range_before=Some\(0\.\.7\)/, { k: 6, vector: [] }],
    [['AnalyzeTableQueryPlan.vector', 'AnalyzeTableQueryPlan.vector.single_vector'], { k: 3, vector: { single_vector: v(3) } }, /ANNSubIndex: .*name=vector_idx, k=3/, { k: 3, vector: [] }],
    [['AnalyzeTableQueryPlan.vector.multi_vector'], { k: 3, vector: { multi_vector: [v(1), v(2)] } }, /ANNIvfBatch: .*query_count=2/, { k: 3, vector: v(1) }],
    [['AnalyzeTableQueryPlan.offset'], { k: 3, vector: [], offset: 4 }, /range_before=Some\(4\.\.7\)/, { k: 3, vector: [] }],
    [['AnalyzeTableQueryPlan.filter'], { k: 3, vector: [], filter: 'id > 77' }, /full_filter=id > Int32\(77\)/, { k: 3, vector: [] }],
    [['AnalyzeTableQueryPlan.prefilter'], { k: 3, vector: v(1), filter: 'id > 77', prefilter: false }, /FilterExec: .*id@\d+ > 77/, { k: 3, vector: v(1), filter: 'id > 77', prefilter: true }],
    [['AnalyzeTableQueryPlan.columns', 'AnalyzeTableQueryPlan.columns.column_names'], { k: 3, vector: [], columns: { column_names: ['score'] } }, /projection=\[score\]/, { k: 3, vector: [] }],
    [['AnalyzeTableQueryPlan.columns.column_aliases'], { k: 3, vector: [], columns: { column_aliases: { twice: 'id * 2' } } }, /expr=\[id@\d+ \* 2 as twice/, { k: 3, vector: [] }],
    [['AnalyzeTableQueryPlan.with_row_id'], { k: 3, vector: [], with_row_id: true, columns: { column_names: ['id'] } }, /row_id=true/, { k: 3, vector: [], columns: { column_names: ['id'] } }],
    [['AnalyzeTableQueryPlan.distance_type'], { k: 3, vector: v(1), distance_type: 'cosine' }, /metric=[Cc]osine/, { k: 3, vector: v(1) }],
    [['AnalyzeTableQueryPlan.nprobes'], { k: 3, vector: v(1), nprobes: 3 }, /minimum_nprobes=3, maximum_nprobes=Some\(3\)/, { k: 3, vector: v(1) }],
    [['AnalyzeTableQueryPlan.refine_factor'], { k: 3, vector: v(1), refine_factor: 4 }, /ANNSubIndex: .*k=12/, { k: 3, vector: v(1) }],
    [['AnalyzeTableQueryPlan.bypass_vector_index'], { k: 3, vector: v(1), bypass_vector_index: true }, /KNNVectorDistance/, { k: 3, vector: v(1) }],
    [['AnalyzeTableQueryPlan.lower_bound', 'AnalyzeTableQueryPlan.upper_bound'], { k: 3, vector: v(1), bypass_vector_index: true, lower_bound: 4, upper_bound: 40 }, /_distance@\d+ >= 4 AND _distance@\d+ < 40/, { k: 3, vector: v(1), bypass_vector_index: true }],
    [['AnalyzeTableQueryPlan.full_text_query', 'AnalyzeTableQueryPlan.full_text_query.string_query'], { k: 3, vector: [], full_text_query: { string_query: { query: 'n42' } } }, /MatchQuery: .*column=name, query=\[n42\]/, { k: 3, vector: [] }],
    [['AnalyzeTableQueryPlan.full_text_query.structured_query'], { k: 3, vector: [], full_text_query: { structured_query: { query: { match: { terms: 'n8', column: 'name' } } } } }, /MatchQuery: .*query=\[n8\]/, { k: 3, vector: [] }],
  ];
  for (const [tokens, body, shows, without] of ANALYZED) {
    covers(tokens, `shows in the analysed plan (${shows.source.slice(0, 50)})`, async () => {
      expect(await plan(body)).toMatch(shows);
      if (without) expect(await plan(without)).not.toMatch(shows);
    });
  }

  covers(['AnalyzeTableQueryPlan.version'], 'runs the query on the version asked for', async () => {
    const rowsRead = async (body: object) => Number(/LanceRead: .*output_rows=(\d+)/.exec((await ok(api().post(`${T('d', 'ver')}/analyze_plan`, body))).body)![1]);
    expect(await rowsRead({ k: 10, vector: [], version: 1 })).toBe(3);
    expect(await rowsRead({ k: 10, vector: [] })).toBe(5);
  });

  covers(['AnalyzeTableQueryPlan.vector_column'], 'searches the vector column named', async () => {
    const text = (await ok(api().post(`${T('d', 'two')}/analyze_plan`, { k: 1, vector: v(-5), vector_column: 'other', bypass_vector_index: true }))).body;
    expect(text).toMatch(/projection=\[other\]/);
  });

  covers(['AnalyzeTableQueryPlan.fast_search'], 'searches the index alone: the rows written since its build are not read', async () => {
    const read = async (extra: object) => (await ok(api().post(`${T('d', 'fast')}/analyze_plan`, { k: 3, vector: v(103), ...extra }))).body;
    expect(await read({})).toMatch(/KNNVectorDistance|deltas|LanceRead/);
    const fast = await read({ fast_search: true });
    expect(fast).not.toMatch(/KNNVectorDistance/);
    expect(await read({})).toMatch(/KNNVectorDistance/);
  });

  covers(['AnalyzeTableQueryPlan.ef'], 'gives the HNSW search its breadth: one below k finds nothing (Lance refuses it)', async () => {
    const answered = async (ef: number) => /ProjectionExec: .*output_rows=(\d+)/.exec((await ok(api().post(`${T('d', 'hnsw')}/analyze_plan`, { k: 20, vector: v(50), ef }))).body)?.[1];
    expect(await answered(40)).toBe('20');
    expect(await answered(5)).toBe('0');
  });

  // --- Writes -----------------------------------------------------------------------------------

  covers(['CreateTable#200', 'CreateTable?mode', 'CreateTable#409'], 'creates the table from the stream; Create refuses a name taken (409 code 5), ExistOk keeps it, Overwrite replaces its content', async () => {
    const made = (await ok(api().send('POST', `${T('d', 'made')}/create`, arrowStream(scored([1, 2, 3], 0)), ARROW))).body;
    expect(made).toMatchObject({ version: 1, location: expect.stringMatching(/\/d\/made-[0-9a-f]+\.lance$/), transaction_id: expect.any(String), properties: {} });
    expect(await count(api(), ['d', 'made'])).toBe(3);
    for (const mode of ['', '?mode=create', '?mode=Create']) expectError(await api().send('POST', `${T('d', 'made')}/create${mode}`, arrowStream(scored([9], 0)), ARROW), 409, 5);
    const kept = (await ok(api().send('POST', `${T('d', 'made')}/create?mode=exist_ok`, arrowStream(scored([9], 0)), ARROW))).body;
    expect(kept).toMatchObject({ version: 1, location: made.location });
    expect(await count(api(), ['d', 'made'])).toBe(3);
    const replaced = (await ok(api().send('POST', `${T('d', 'made')}/create?mode=overwrite`, arrowStream(scored([7, 8], 1)), ARROW))).body;
    expect(replaced.version).toBe(2);
    expect(await ids(s.url, ['d', 'made'], { k: 10, vector: [] })).toEqual([7, 8]);
    // An empty stream makes an empty table of its schema.
    await ok(api().send('POST', `${T('d', 'empty')}/create`, arrowStream(scored([], 0)), ARROW));
    expect(await count(api(), ['d', 'empty'])).toBe(0);
  });

  covers(['CreateTable?properties'], 'stores the properties (a JSON map in the query) on the table', async () => {
    const made = (await ok(api().send('POST', `${T('d', 'propd')}/create?properties=${encodeURIComponent(JSON.stringify({ team: 'eng', tier: '1' }))}`, arrowStream(scored([1], 0)), ARROW))).body;
    expect(made.properties).toEqual({ team: 'eng', tier: '1' });
    expect((await ok(api().post(`${T('d', 'propd')}/describe`, {}))).body.properties).toEqual({ team: 'eng', tier: '1' });
    expectError(await api().send('POST', `${T('d', 'propd2')}/create?properties=notjson`, arrowStream(scored([1], 0)), ARROW), 400, 13);
  });

  covers(['CreateTable?storage_options'], "passes Lance the write-time options of the new dataset (V1 manifest names here); refuses any other storage option", async () => {
    const options = encodeURIComponent(JSON.stringify({ new_table_enable_v2_manifest_paths: 'false' }));
    await ok(api().send('POST', `${T('d', 'v1names')}/create?storage_options=${options}`, arrowStream(scored([1], 0)), ARROW));
    expect((await ok(api().post(`${T('d', 'v1names')}/version/list`, null))).body.versions[0].manifest_path).toMatch(/\/_versions\/1\.manifest$/);
    expect((await ok(api().post(`${T('d', 'made')}/version/list`, null))).body.versions[0].manifest_path).toMatch(/\/_versions\/18446744073709551614\.manifest$/);
    const endpoint = encodeURIComponent(JSON.stringify({ aws_endpoint: 'http://elsewhere' }));
    expectError(await api().send('POST', `${T('d', 'elsewhere')}/create?storage_options=${endpoint}`, arrowStream(scored([1], 0)), ARROW), 400, 13, /aws_endpoint/);
    expectError(await api().post(`${T('d', 'elsewhere')}/exists`, {}), 404, 4);
  });

  covers(['InsertIntoTable#200', 'InsertIntoTable?mode'], 'appends the rows (Append, the default), or replaces the content with them (Overwrite)', async () => {
    await createTable(api(), ['d', 'ins'], scored([1, 2], 0));
    const appended = (await ok(api().send('POST', `${T('d', 'ins')}/insert`, arrowStream(scored([3], 0)), ARROW))).body;
    expect(appended).toEqual({ transaction_id: expect.any(String), num_inserted_rows: 1, version: 2 });
    await ok(api().send('POST', `${T('d', 'ins')}/insert?mode=append`, arrowStream(scored([4], 0)), ARROW));
    expect(await ids(s.url, ['d', 'ins'], { k: 10, vector: [] })).toEqual([1, 2, 3, 4]);
    await ok(api().send('POST', `${T('d', 'ins')}/insert?mode=Overwrite`, arrowStream(scored([9], 0)), ARROW));
    expect(await ids(s.url, ['d', 'ins'], { k: 10, vector: [] })).toEqual([9]);
    expectError(await api().send('POST', `${T('d', 'ins')}/insert?mode=upsert`, arrowStream(scored([5], 0)), ARROW), 400, 13);
  });

  const merged = async (name: string, query: string, idList: number[], score: number) =>
    (await ok(api().send('POST', `${T('d', name)}/merge_insert?${query}`, arrowStream(scored(idList, score)), ARROW))).body;
  const contents = async (name: string) => (await q(['d', name], { k: 100, vector: [] })).rows.map((r) => [r.id, r.score]).sort((a, b) => a[0] - b[0]);

  covers(
    ['MergeInsertIntoTable#200', 'MergeInsertIntoTable?on', 'MergeInsertIntoTable?when_matched_update_all', 'MergeInsertIntoTable?when_not_matched_insert_all'],
    'matches rows on the column named, updating the matched and inserting the others as asked',
    async () => {
      await createTable(api(), ['d', 'up'], scored([1, 2, 3], 0));
      expect(await merged('up', 'on=id&when_matched_update_all=true', [2, 9], 1)).toMatchObject({ num_updated_rows: 1, num_inserted_rows: 0, num_deleted_rows: 0 });
      expect(await merged('up', 'on=id&when_not_matched_insert_all=true', [3, 4], 2)).toMatchObject({ num_updated_rows: 0, num_inserted_rows: 1 });
      const both = await merged('up', 'on=id&when_matched_update_all=true&when_not_matched_insert_all=true&use_index=false', [1, 5], 3);
      expect(both).toMatchObject({ num_updated_rows: 1, num_inserted_rows: 1, transaction_id: expect.any(String), version: expect.any(Number) });
      expect(await contents('up')).toEqual([[1, 3], [2, 1], [3, 0], [4, 2], [5, 3]]);
      // Matching on another column: `score`.
      expect(await merged('up', 'on=score&when_matched_update_all=true', [42], 3)).toMatchObject({ num_updated_rows: 2 });
      // Both rows of score 3 take the source row's values.
      expect(await contents('up')).toEqual([[2, 1], [3, 0], [4, 2], [42, 3], [42, 3]]);
      expectError(await api().send('POST', `${T('d', 'up')}/merge_insert?on=nothing&when_matched_update_all=true`, arrowStream(scored([1], 0)), ARROW), 404, 12);
    },
  );

  covers(['MergeInsertIntoTable?when_matched_update_all_filt'], 'updates only the matched rows the condition holds for (target. and source. name the two sides)', async () => {
    await createTable(api(), ['d', 'filt'], scored([1, 2, 3], 0));
    expect(await merged('filt', `on=id&when_matched_update_all=true&when_matched_update_all_filt=${encodeURIComponent('target.id >= 2')}`, [1, 2, 3], 5)).toMatchObject({ num_updated_rows: 2 });
    expect(await contents('filt')).toEqual([[1, 0], [2, 5], [3, 5]]);
    // The filter alone asks for its clause.
    expect(await merged('filt', `on=id&when_matched_update_all_filt=${encodeURIComponent('source.score > target.score')}`, [1, 2], 4)).toMatchObject({ num_updated_rows: 1 });
    expect(await contents('filt')).toEqual([[1, 4], [2, 5], [3, 5]]);
  });

  covers(['MergeInsertIntoTable?when_not_matched_by_source_delete', 'MergeInsertIntoTable?when_not_matched_by_source_delete_filt'], 'deletes the target rows no source row matches (only those the condition holds for)', async () => {
    await createTable(api(), ['d', 'src'], scored([1, 2, 3, 4, 5], 0));
    expect(await merged('src', `on=id&when_not_matched_by_source_delete_filt=${encodeURIComponent('id < 3')}`, [4], 1)).toMatchObject({ num_deleted_rows: 2 });
    expect(await contents('src')).toEqual([[3, 0], [4, 0], [5, 0]]);
    expect(await merged('src', 'on=id&when_not_matched_by_source_delete=true', [4], 1)).toMatchObject({ num_deleted_rows: 2 });
    expect(await contents('src')).toEqual([[4, 0]]);
  });

  covers(['MergeInsertIntoTable?timeout'], 'stops a merge that runs longer than the timeout (as the spec writes durations), changing nothing', async () => {
    await createTable(api(), ['d', 'slow'], scored([1, 2, 3], 0));
    expectError(await api().send('POST', `${T('d', 'slow')}/merge_insert?on=id&when_matched_update_all=true&timeout=1ms`, arrowStream(scored([1], 9)), ARROW), 400, 13, /longer than 1 ms/);
    expect(await contents('slow')).toEqual([[1, 0], [2, 0], [3, 0]]);
    expect(await merged('slow', 'on=id&when_matched_update_all=true&timeout=30s', [1], 9)).toMatchObject({ num_updated_rows: 1 });
    expectError(await api().send('POST', `${T('d', 'slow')}/merge_insert?on=id&when_matched_update_all=true&timeout=soon`, arrowStream(scored([1], 9)), ARROW), 400, 13);
  });

  covers(['UpdateTable#200', 'UpdateTable.updates', 'UpdateTable.predicate'], 'sets each column to its expression, in the rows the predicate holds for (all without one)', async () => {
    await createTable(api(), ['d', 'upd'], scored([1, 2, 3], 1));
    const updated = (await ok(api().post(`${T('d', 'upd')}/update`, { updates: [['score', 'score * 10 + id']], predicate: 'id >= 2' }))).body;
    expect(updated).toEqual({ transaction_id: expect.any(String), updated_rows: 2, version: 2 });
    expect(await contents('upd')).toEqual([[1, 1], [2, 12], [3, 13]]);
    expect((await ok(api().post(`${T('d', 'upd')}/update`, { updates: [['score', '0']] }))).body.updated_rows).toBe(3);
    expect(await contents('upd')).toEqual([[1, 0], [2, 0], [3, 0]]);
  });

  covers(['UpdateTable.properties'], 'stores the properties on the table, over those it had', async () => {
    await createTable(api(), ['d', 'updprops'], scored([1], 1), `?properties=${encodeURIComponent(JSON.stringify({ team: 'eng', stage: 'raw' }))}`);
    await ok(api().post(`${T('d', 'updprops')}/update`, { updates: [['score', '2']], properties: { stage: 'clean', reviewed_by: 'ana' } }));
    expect((await ok(api().post(`${T('d', 'updprops')}/describe`, {}))).body.properties).toEqual({ team: 'eng', stage: 'clean', reviewed_by: 'ana' });
  });

  covers(['DeleteFromTable#200', 'DeleteFromTable.predicate'], 'deletes the rows the predicate holds for', async () => {
    await createTable(api(), ['d', 'del'], scored([1, 2, 3, 4], 0));
    expect((await ok(api().post(`${T('d', 'del')}/delete`, { predicate: 'id % 2 = 0' }))).body).toEqual({ transaction_id: expect.any(String), num_deleted_rows: 2, version: 2 });
    expect(await contents('del')).toEqual([[1, 0], [3, 0]]);
  });
});

/** A second vector column, each row's the negation of its id. */
function negated(n: number) {
  const type = new arrow.FixedSizeList(4, new arrow.Field('item', new arrow.Float32(), true));
  return arrow.makeVector(
    arrow.makeData({ type, length: n, child: arrow.makeData({ type: new arrow.Float32(), length: n * 4, data: Float32Array.from(Array.from({ length: n * 4 }, (_, i) => -Math.floor(i / 4))) }) }),
  );
}
