import * as arrow from 'apache-arrow';
import { Api, Reply } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { streamClaimingFields, streamClaimingRows } from '../support/arrow-corrupt';
import { RunningServer, startServer } from '../support/server';

/** Input that once ended the server process or made it hold gigabytes, now refused before any parser reads it. */
describe('bounded input', () => {
  let server: RunningServer;
  let api: Api;
  const T = '/v1/table/lim%24t';

  const refused = (res: Reply, pattern?: RegExp) => {
    expect([res.status, res.body?.code]).toEqual([400, 13]);
    if (pattern) expect(res.body.error).toMatch(pattern);
  };
  /** The process is still running and answering. */
  const alive = async () => {
    expect(server.process.exitCode).toBeNull();
    expect(server.process.signalCode).toBeNull();
    expect((await api.get('/healthz')).status).toBe(200);
  };
  const count = async (predicate?: string) => (await api.post(`${T}/count_rows`, predicate === undefined ? {} : { predicate })).body;
  const vector = [1, 2, 3, 4, 5, 6, 7, 8];

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/lim/create', {})).status).toBe(200);
    expect((await api.send('POST', `${T}/create`, arrowStream(sampleTable(0, 60)), ARROW_STREAM)).status).toBe(200);
  }, 60_000);
  afterAll(() => server?.stop());

  describe('SQL expressions', () => {
    const fiftyThousand = Array(50_000).fill('id>1').join(' AND ');

    it('refuses 50,000 ANDed terms on count_rows, query, explain and analyze, and keeps serving', async () => {
      expect(fiftyThousand.length).toBeGreaterThan(440_000);
      const terms = /predicate has more than 10000 terms \(SQL_EXPRESSION_MAX_TERMS\)|filter has more than 10000 terms \(SQL_EXPRESSION_MAX_TERMS\)/;
      refused(await api.post(`${T}/count_rows`, { predicate: fiftyThousand }), terms);
      refused(await api.post(`${T}/query`, { k: 5, filter: fiftyThousand }), terms);
      refused(await api.post(`${T}/query`, { k: 5, vector: { single_vector: vector }, filter: fiftyThousand }), terms);
      refused(await api.post(`${T}/explain_plan`, { query: { k: 5, filter: fiftyThousand } }), terms);
      refused(await api.post(`${T}/analyze_plan`, { k: 5, filter: fiftyThousand }), terms);
      await alive();
      expect(await count()).toBe(60);
    });

    it('refuses the same in every other expression it hands to Lance', async () => {
      const deep = `id${' + 1'.repeat(700)} > 0`;
      refused(await api.post(`${T}/count_rows`, { predicate: deep }), /nests deeper than 100 \(SQL_EXPRESSION_MAX_DEPTH\)/);
      refused(await api.post(`${T}/update`, { predicate: 'id < 3', updates: [['id', deep]] }), /updates value nests deeper/);
      refused(await api.post(`${T}/update`, { predicate: fiftyThousand, updates: [['id', 'id']] }), /SQL_EXPRESSION_MAX_TERMS/);
      refused(await api.post(`${T}/delete`, { predicate: fiftyThousand }), /SQL_EXPRESSION_MAX_TERMS/);
      refused(await api.post(`${T}/add_columns`, { new_columns: [{ name: 'x', expression: deep }] }), /expression nests deeper/);
      refused(await api.post(`${T}/add_columns`, { new_columns: [{ name: 'x', computed: fiftyThousand }] }), /computed has more than/);
      refused(await api.post(`${T}/backfill_column`, { column: 'x', where: fiftyThousand }), /where has more than/);
      refused(await api.post(`${T}/query`, { k: 5, columns: { column_aliases: { y: deep } } }), /the expression of alias 'y' nests deeper/);
      const merge = await api.send('POST', `${T}/merge_insert?on=id&when_matched_update_all=true&when_matched_update_all_filt=${encodeURIComponent(deep)}`, arrowStream(sampleTable(0, 1)), ARROW_STREAM);
      refused(merge, /when_matched_update_all_filt nests deeper/);
      const view = await api.post('/v1/materialized_view/limview/create', {
        kind: 'query',
        source_query: JSON.stringify({ source_table: 't', select: { id: deep } }),
        output_schema: Buffer.from(arrow.tableToIPC(arrow.tableFromArrays({ id: new Float64Array(0) }), 'stream')).toString('base64'),
      });
      refused(view, /source_query: the expression of 'id' nests deeper/);
      await alive();
      expect(await count()).toBe(60);
    });

    it("refuses counts that make Lance allocate gigabytes, and functions that multiply one another's sizes", async () => {
      // 2.5 million repetitions of each of 60 short texts peaked at 2-3 GB.
      refused(await api.post(`${T}/count_rows`, { predicate: 'length(repeat(text, 2500000)) > 0' }), /repeat\(\) a count that is not an integer literal of at most 1000 \(SQL_EXPRESSION_MAX_REPEAT\)/);
      refused(await api.post(`${T}/count_rows`, { predicate: 'length(repeat(text, id * 100000)) > 0' }), /SQL_EXPRESSION_MAX_REPEAT/);
      refused(await api.post(`${T}/count_rows`, { predicate: "length(lpad(text, 100000000, 'x')) > 0" }), /lpad\(\)/);
      refused(await api.post(`${T}/count_rows`, { predicate: 'length(repeat(repeat(text, 1000), 1000)) > 0' }), /sizes would multiply/);
      const doubling = Array.from({ length: 20 }).reduce<string>((x) => `replace(${x}, 'e', 'ee')`, 'text');
      refused(await api.post(`${T}/count_rows`, { predicate: `length(${doubling}) > 0` }), /sizes would multiply/);
      await alive();
    });

    it('passes ordinary expressions up to the limits', async () => {
      // 2,500 comparisons ANDed are 9,999 terms; Lance answers them in well under a second.
      expect(await count(Array(2500).fill('id>=0').join(' AND '))).toBe(60);
      expect(await count(`id${' + 1'.repeat(99)} > 100`)).toBe(58);
      expect(await count(`id IN (${Array.from({ length: 4000 }, (_, i) => i * 2).join(',')})`)).toBe(30);
      expect(await count("length(repeat(category, 3)) = 15 AND lpad(CAST(id AS VARCHAR), 4, '0') < '0010'")).toBeGreaterThan(0);
      expect(await count("replace(replace(text, ' ', ''), 'pie', '') <> text")).toBe(60);
      const updated = await api.post(`${T}/update`, { predicate: 'id = 59', updates: [['category', "concat(category, '!')"]] });
      expect(updated.status).toBe(200);
      const query = await api.post(`${T}/query`, { k: 3, vector: { single_vector: vector }, filter: Array(500).fill('id >= 0').join(' OR ') });
      expect(query.status).toBe(200);
    });
  });

  describe('Arrow IPC bodies', () => {
    const claiming = streamClaimingFields();

    it('refuses a 288-byte stream claiming 2^31-1 fields on insert, create, merge_insert and a view schema, at once', async () => {
      expect(claiming.length).toBeLessThan(300);
      const fields = /claims 2147483647 fields, more than its \d+ bytes of metadata can hold/;
      const started = Date.now();
      refused(await api.send('POST', `${T}/insert`, claiming, ARROW_STREAM), fields);
      refused(await api.send('POST', '/v1/table/lim%24fresh/create', claiming, ARROW_STREAM), fields);
      refused(await api.send('POST', `${T}/merge_insert?on=id&when_not_matched_insert_all=true`, claiming, ARROW_STREAM), fields);
      refused(await api.send('POST', '/v1/tables/limfresh', claiming, { ...ARROW_STREAM, 'x-api-key': 'any' }), fields);
      const view = await api.post('/v1/materialized_view/limview/create', {
        kind: 'query',
        source_query: JSON.stringify({ source_table: 't', select: ['id'] }),
        output_schema: claiming.toString('base64'),
      });
      refused(view, /output_schema is not a usable Arrow IPC stream: .*claims 2147483647 fields/);
      expect(Date.now() - started).toBeLessThan(2000);
      await alive();
      expect((await api.post('/v1/table/lim%24fresh/exists', {})).status).toBe(404);
      expect(await count()).toBe(60);
    });

    it('refuses batches that claim more rows than their bytes hold', async () => {
      const stream = arrowStream(new arrow.Table({ id: arrow.vectorFromArray(Int32Array.from([1, 2])) }));
      refused(await api.send('POST', `${T}/insert`, streamClaimingRows(stream, 1_000_000_000n), ARROW_STREAM), /claims 1000000000 rows/);
      refused(await api.send('POST', `${T}/insert`, streamClaimingRows(stream, 1000n), ARROW_STREAM), /claims 1000 rows, more than its 8-byte buffer holds/);
      expect(await count()).toBe(60);
    });

    it('takes ordinary bodies: several batches, dictionaries, 10,000 rows of 64-d vectors', async () => {
      const many = new arrow.Table([...sampleTable(1000, 10).batches, ...sampleTable(1010, 10).batches]);
      expect((await api.send('POST', '/v1/table/lim%24many/create', arrowStream(many), ARROW_STREAM)).status).toBe(200);
      const words = arrow.vectorFromArray(['a', 'b', 'a']);
      expect(words.type).toBeInstanceOf(arrow.Dictionary);
      const dict = await api.send('POST', '/v1/table/lim%24dict/create', arrowStream(new arrow.Table({ w: words })), ARROW_STREAM);
      expect(dict.status).toBe(200);
      const big = arrowStream(sampleTable(0, 10_000, 64));
      expect((await api.send('POST', '/v1/table/lim%24big/create', big, ARROW_STREAM)).status).toBe(200);
      expect((await api.post('/v1/table/lim%24big/count_rows', {})).body).toBe(10_000);
    });
  });

  describe('property maps, names and context', () => {
    const props = (n: number, size = 4) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v'.repeat(size)]));

    it('bounds namespace, table, version and transaction properties', async () => {
      refused(await api.post('/v1/namespace/lim%24many/create', { properties: props(1001) }), /properties: more than 1000 entries \(PROPERTIES_MAX_COUNT\)/);
      refused(await api.post('/v1/table/lim%24big2/declare', { properties: props(10, 7000) }), /more than 65536 bytes of keys and values \(PROPERTIES_MAX_BYTES\)/);
      const header = { ...ARROW_STREAM, 'x-lance-table-properties': JSON.stringify(props(1001, 1)) };
      refused(await api.send('POST', '/v1/table/lim%24hdr/create', arrowStream(sampleTable(0, 1)), header), /PROPERTIES_MAX_COUNT/);
      refused(await api.post(`${T}/version/create`, { version: 99, manifest_path: 'x', metadata: props(1001) }), /metadata: more than 1000 entries/);
      // At the limit: accepted.
      expect((await api.post('/v1/namespace/lim%24full/create', { properties: props(1000) })).status).toBe(200);
      expect((await api.post('/v1/table/lim%24fulltable/declare', { properties: props(8, 8000) })).status).toBe(200);

      const tx = (await api.send<any>('POST', `${T}/insert`, arrowStream(sampleTable(60, 1)), ARROW_STREAM)).body.transaction_id;
      const have = Object.keys((await api.post(`/v1/transaction/${tx}/describe`, {})).body.properties).length;
      const set = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ setPropertyAction: { key: `p${from + i}`, value: 'x' } }));
      expect((await api.post(`/v1/transaction/${tx}/alter`, { actions: set(0, 1000 - have) })).status).toBe(200);
      refused(await api.post(`/v1/transaction/${tx}/alter`, { actions: set(5000, 1) }), /would hold 1001 entries; at most 1000 are allowed \(PROPERTIES_MAX_COUNT\)/);
      expect(Object.keys((await api.post(`/v1/transaction/${tx}/describe`, {})).body.properties)).toHaveLength(1000);
    });

    it('refuses __proto__, constructor and prototype as keys rather than dropping them', async () => {
      const raw = (path: string, json: string, headers: Record<string, string> = {}) => api.send('POST', path, json, { 'content-type': 'application/json', ...headers });
      refused(await raw('/v1/namespace/lim%24proto/create', '{"properties": {"__proto__": "x", "a": "b"}}'), /properties: the key '__proto__' is reserved/);
      refused(await raw('/v1/table/lim%24proto/declare', '{"properties": {"constructor": "x"}}'), /'constructor' is reserved/);
      refused(await raw('/v1/namespace/lim%24proto/create', '{"context": {"__proto__": "x"}}'), /context: the key '__proto__' is reserved/);
      refused(await raw(`${T}/version/create`, '{"version": 99, "manifest_path": "x", "metadata": {"prototype": "x"}}'), /'prototype' is reserved/);
      refused(await raw(`${T}/query`, '{"k": 1, "columns": {"column_aliases": {"__proto__": "id"}}}'), /'__proto__' is reserved/);
      refused(await api.post('/v1/namespace/lim%24proto/create', {}, { 'x-lance-ctx-__proto__': 'x' }), /context key '__proto__' is reserved/);
      const header = { ...ARROW_STREAM, 'x-lance-table-properties': '{"__proto__": "x"}' };
      refused(await api.send('POST', '/v1/table/lim%24proto/create', arrowStream(sampleTable(0, 1)), header), /'__proto__' is reserved/);
      const tx = (await api.send<any>('POST', `${T}/insert`, arrowStream(sampleTable(61, 1)), ARROW_STREAM)).body.transaction_id;
      refused(await api.post(`/v1/transaction/${tx}/alter`, { actions: [{ setPropertyAction: { key: 'constructor', value: 'x' } }] }), /'constructor' is reserved/);
      // Keys an object inherits, but that are not reserved, are ordinary keys.
      expect((await api.post(`/v1/transaction/${tx}/alter`, { actions: [{ setPropertyAction: { key: 'toString', value: 'x', mode: 'Fail' } }] })).status).toBe(200);
      expect((await api.post('/v1/namespace/lim%24proto/exists', {})).status).toBe(404);
    });

    it('bounds context headers and the body context together, and names', async () => {
      const echoed = await api.post('/v1/namespace/lim%24ctx/create', { context: { ticket: 'T-1' } }, { 'x-lance-ctx-user': 'u'.repeat(4000) });
      expect(echoed.status).toBe(200);
      expect(echoed.headers.get('x-lance-ctx-user')).toHaveLength(4000);
      refused(await api.post('/v1/namespace/lim%24ctx2/create', {}, { 'x-lance-ctx-a': 'a'.repeat(5000), 'x-lance-ctx-b': 'b'.repeat(5000) }), /more than 8192 bytes \(CONTEXT_MAX_BYTES\)/);
      refused(await api.post('/v1/namespace/lim%24ctx2/create', { context: { big: 'x'.repeat(9000) } }), /CONTEXT_MAX_BYTES/);
      refused(await api.post('/v1/namespace/lim%24ctx2/create', { context: { big: 'x'.repeat(5000) } }, { 'x-lance-ctx-more': 'y'.repeat(5000) }), /CONTEXT_MAX_BYTES/);
      const long = 'c'.repeat(1025);
      refused(await api.post(`${T}/add_columns`, { new_columns: [{ name: long, expression: 'id' }] }), /new_columns\.0\.name/);
      refused(await api.post(`${T}/create_index`, { column: long, index_type: 'BTREE' }), /column/);
      refused(await api.post(`${T}/tags/create`, { tag: long, version: 1 }), /tag/);
      refused(await api.post(`${T}/count_rows`, { branch: long }), /branch/);
      expect((await api.post('/v1/namespace/lim%24ctx2/exists', {})).status).toBe(404);
    });
  });

  describe('numbers, vectors and paging in JSON bodies', () => {
    it('refuses numbers that are Infinity once parsed, and bodies nested past JSON_MAX_DEPTH', async () => {
      const raw = (path: string, json: string) => api.send('POST', path, json, { 'content-type': 'application/json' });
      const infinite = /number too large to represent \(such as 1e309\)/;
      refused(await raw(`${T}/query`, '{"k": 5, "vector": [1e309, 2, 3, 4, 5, 6, 7, 8]}'), infinite);
      refused(await raw(`${T}/query`, '{"k": 5, "vector": {"single_vector": [1, 2, 3, 4, 5, 6, 7, -1e400]}}'), infinite);
      refused(await raw(`${T}/query`, `{"k": 5, "vector": [${vector}], "upper_bound": 1e309}`), infinite);
      refused(await raw(`${T}/count_rows`, `{"version": 1${'0'.repeat(400)}}`), infinite);
      refused(await raw(`${T}/query`, `{"k": 5, "full_text_query": {"structured_query": {"query": ${'{"boost": {"positive": '.repeat(70)}{}${'}}'.repeat(70)}}}}`), /deeper than 64 \(JSON_MAX_DEPTH\)/);
      // An id of 296,513 numbers once overflowed the schemas' stack (a 500).
      const ids = `[${Array(296_513).fill(4).join(',')}]`;
      refused(await raw('/v1/table/version/batch-create', `{"entries": [{"id": ${ids}, "version": 1, "manifest_path": "x"}]}`), /array of more than 65536 items; at most 65536 .*\(JSON_MAX_ARRAY_ITEMS\)/);
      // Tiny, huge-exponent-but-finite and negative-zero numbers are ordinary.
      expect((await raw(`${T}/query`, `{"k": 5, "vector": [1e-400, 1e300, -0, 4, 5, 6, 7, 8]}`)).status).toBe(200);
      await alive();
    });

    it('reads an empty vector as no vector search, as lancedb sends it, and refuses an empty vector among several', async () => {
      const plain = await api.post(`${T}/query`, { k: 5, vector: { single_vector: [] }, filter: 'id < 3' });
      expect(plain.status).toBe(200);
      expect((await api.post(`${T}/query`, { k: 5, vector: [], filter: 'id < 3' })).status).toBe(200);
      refused(await api.post(`${T}/query`, { k: 5, vector: { multi_vector: [vector, []] } }), /every vector of multi_vector must hold at least one number/);
      refused(await api.post(`${T}/explain_plan`, { query: { k: 5, vector: { multi_vector: [[]] } } }), /multi_vector/);
      refused(await api.post(`${T}/analyze_plan`, { k: 5, vector: { multi_vector: [[]] } }), /multi_vector/);
    });

    it('honours limit and page_token in the version/list body as in its query', async () => {
      const versions = (res: Reply) => (res.body.versions as Array<{ version: number }>).map((v) => v.version);
      for (let i = 0; i < 3; i++) expect((await api.send('POST', `${T}/insert`, arrowStream(sampleTable(100 + i, 1)), ARROW_STREAM)).status).toBe(200);
      const all = versions(await api.post(`${T}/version/list`, null));
      expect(all.length).toBeGreaterThan(4);
      const first = await api.post(`${T}/version/list`, { limit: 2 });
      expect(versions(first)).toEqual(all.slice(0, 2));
      expect(first.body.page_token).toBeTruthy();
      const second = await api.post(`${T}/version/list`, { limit: 2, page_token: first.body.page_token });
      expect(versions(second)).toEqual(all.slice(2, 4));
      expect(versions(await api.post(`${T}/version/list`, { limit: 1, descending: true }))).toEqual([all[all.length - 1]]);
      // The query wins where both are given.
      expect(versions(await api.post(`${T}/version/list?limit=3`, { limit: 1 }))).toEqual(all.slice(0, 3));
      refused(await api.post(`${T}/version/list`, { limit: 0 }));
    });
  });
});

describe('input limits from the environment', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({
      entry: 'api',
      env: {
        SQL_EXPRESSION_MAX_TERMS: '20',
        SQL_EXPRESSION_MAX_DEPTH: '10',
        SQL_EXPRESSION_MAX_BYTES: '200',
        SQL_EXPRESSION_MAX_REPEAT: '5',
        ARROW_MAX_FIELDS: '3',
        ARROW_MAX_DEPTH: '2',
        ARROW_MAX_NODES: '4',
        PROPERTIES_MAX_COUNT: '2',
        PROPERTIES_MAX_BYTES: '100',
        CONTEXT_MAX_BYTES: '100',
        JSON_MAX_DEPTH: '6',
        // Past the default, so that the schemas themselves meet a body they cannot finish.
        JSON_MAX_ARRAY_ITEMS: '1000000',
      },
    });
    api = new Api(server.url);
    const table = new arrow.Table({ a: arrow.vectorFromArray(Int32Array.of(1, 2)), b: arrow.vectorFromArray(Int32Array.of(3, 4)) });
    expect((await api.send('POST', '/v1/table/e/create', arrowStream(table), ARROW_STREAM)).status).toBe(200);
  }, 60_000);
  afterAll(() => server?.stop());

  it('holds every request to the configured limits', async () => {
    const expectRefused = (res: Reply, pattern: RegExp) => {
      expect([res.status, res.body?.code]).toEqual([400, 13]);
      expect(res.body.error).toMatch(pattern);
    };
    const count = (predicate: string) => api.post('/v1/table/e/count_rows', { predicate });
    expect((await count('a > 0 AND b > 0 AND a < 9 AND b < 9')).body).toBe(2);
    expectRefused(await count(Array(6).fill('a > 0').join(' AND ')), /more than 20 terms \(SQL_EXPRESSION_MAX_TERMS\)/);
    expectRefused(await count(`${'abs('.repeat(11)}a${')'.repeat(11)} > 0`), /deeper than 10 \(SQL_EXPRESSION_MAX_DEPTH\)/);
    expect((await count(`${'abs('.repeat(9)}a${')'.repeat(9)} > 0`)).body).toBe(2);
    expectRefused(await count(`a IN (1) OR '${'x'.repeat(200)}' = ''`), /longer than 200 bytes \(SQL_EXPRESSION_MAX_BYTES\)/);
    expect((await count("length(repeat('ab', 5)) = 10")).body).toBe(2);
    expectRefused(await count("length(repeat('ab', 6)) = 12"), /at most 5 \(SQL_EXPRESSION_MAX_REPEAT\)/);

    const wide = new arrow.Table({ a: arrow.vectorFromArray(Int32Array.of(1)), b: arrow.vectorFromArray(Int32Array.of(1)), c: arrow.vectorFromArray(Int32Array.of(1)), d: arrow.vectorFromArray(Int32Array.of(1)) });
    expectRefused(await api.send('POST', '/v1/table/wide/create', arrowStream(wide), ARROW_STREAM), /more than 3 fields \(ARROW_MAX_FIELDS\)/);
    const nested = arrow.vectorFromArray([[[1]]], new arrow.List(new arrow.Field('l', new arrow.List(new arrow.Field('i', new arrow.Int32(), true)), true)));
    expectRefused(await api.send('POST', '/v1/table/deep/create', arrowStream(new arrow.Table({ n: nested })), ARROW_STREAM), /deeper than 2 \(ARROW_MAX_DEPTH\)/);
    const one = new arrow.Table({ a: arrow.vectorFromArray(Int32Array.of(5)), b: arrow.vectorFromArray(Int32Array.of(6)) });
    expect((await api.send('POST', '/v1/table/e/insert', arrowStream(new arrow.Table([one.batches[0], one.batches[0]])), ARROW_STREAM)).status).toBe(200);
    const three = new arrow.Table([one.batches[0], one.batches[0], one.batches[0]]);
    expectRefused(await api.send('POST', '/v1/table/e/insert', arrowStream(three), ARROW_STREAM), /more than 4 field nodes in all \(ARROW_MAX_NODES\)/);

    expect((await api.post('/v1/namespace/p2/create', { properties: { a: '1', b: '2' } })).status).toBe(200);
    expectRefused(await api.post('/v1/namespace/p3/create', { properties: { a: '1', b: '2', c: '3' } }), /more than 2 entries \(PROPERTIES_MAX_COUNT\)/);
    expectRefused(await api.post('/v1/namespace/p4/create', { properties: { a: 'x'.repeat(100) } }), /more than 100 bytes .*\(PROPERTIES_MAX_BYTES\)/);
    expectRefused(await api.post('/v1/namespace/c1/create', {}, { 'x-lance-ctx-a': 'x'.repeat(100) }), /more than 100 bytes \(CONTEXT_MAX_BYTES\)/);
    expectRefused(await api.post('/v1/namespace/c1/create', { context: { a: { b: { c: { d: { e: {} } } } } } }), /deeper than 6 \(JSON_MAX_DEPTH\)/);
    expect((await api.post('/v1/table/e/count_rows', {})).body).toBe(4);
  });

  it('answers a body the schemas cannot finish checking with 400 code 13, not 500', async () => {
    const ids = `[${Array(296_513).fill(4).join(',')}]`;
    const res = await api.send<{ code: number; error: string }>('POST', '/v1/table/version/batch-create', `{"entries": [{"id": ${ids}, "version": 1, "manifest_path": "x"}]}`, { 'content-type': 'application/json' });
    expect([res.status, res.body?.code]).toEqual([400, 13]);
    expect(res.body.error).toMatch(/too large or too complex to check/);
    expect((await api.get('/healthz')).status).toBe(200);
  });

  it('refuses to start with a limit out of range, naming it', async () => {
    await expect(startServer({ entry: 'api', env: { SQL_EXPRESSION_MAX_TERMS: '0' } })).rejects.toThrow(/SQL_EXPRESSION_MAX_TERMS must be an integer from 16/);
  });
});
