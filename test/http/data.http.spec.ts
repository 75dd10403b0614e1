import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const ARROW_STREAM = { 'content-type': 'application/vnd.apache.arrow.stream' };

function rows(from: number, count: number, extra: Record<string, unknown> = {}) {
  return arrow.tableFromArrays({
    id: Int32Array.from({ length: count }, (_, i) => from + i),
    text: Array.from({ length: count }, (_, i) => `word${(from + i) % 5} item ${from + i}`),
    ...extra,
  });
}

function withVectors(from: number, count: number) {
  const base = rows(from, count);
  const vectorType = new arrow.FixedSizeList(2, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: count * 2 }, (_, i) => (i % 2 ? Math.cos(from + (i >> 1)) : Math.sin(from + (i >> 1))));
  const vectors = arrow.makeVector(
    arrow.makeData({ type: vectorType, length: count, child: arrow.makeData({ type: new arrow.Float32(), length: count * 2, data: values }) }),
  );
  return new arrow.Table({ id: base.getChild('id')!, text: base.getChild('text')!, vector: vectors });
}

const ipc = (t: arrow.Table) => Buffer.from(arrow.tableToIPC(t, 'stream'));

describe.each([
  ['managed', true],
  ['unmanaged', false],
])('data operations over HTTP (%s)', (_mode, managed) => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { MANAGED_VERSIONING: String(managed) } });
    api = new Api(server.url);
    await api.post('/v1/namespace/d/create', {});
  });
  afterAll(() => server?.stop());

  it('creates a table from an Arrow stream, with location and properties headers', async () => {
    const res = await api.send('POST', '/v1/table/d%24items/create', ipc(withVectors(0, 50)), {
      ...ARROW_STREAM,
      'x-lance-table-properties': '{"owner":"data"}',
    });
    expect(res.status).toBe(200);
    expect((res.body as any).version).toBe(1);
    expect((res.body as any).properties).toEqual({ owner: 'data' });
    const again = await api.send('POST', '/v1/table/d%24items/create', ipc(withVectors(0, 5)), ARROW_STREAM);
    expect([again.status, (again.body as any).code]).toEqual([409, 5]);
    const existOk = await api.send('POST', '/v1/table/d%24items/create?mode=exist_ok', ipc(withVectors(0, 5)), ARROW_STREAM);
    expect(existOk.status).toBe(200);
  });

  it('inserts (append and overwrite), counts with a predicate and at a version', async () => {
    const appended = await api.send('POST', '/v1/table/d%24items/insert', ipc(withVectors(50, 25)), ARROW_STREAM);
    expect(appended.status).toBe(200);
    expect(appended.body).toMatchObject({ num_inserted_rows: 25, version: 2 });
    const tx = await api.post(`/v1/transaction/${(appended.body as any).transaction_id}/describe`, {});
    expect(tx.body.properties.operation).toBe('InsertTable');

    const count = await api.post('/v1/table/d%24items/count_rows', {});
    expect(count.text).toBe('75');
    expect((await api.post('/v1/table/d%24items/count_rows', { predicate: 'id >= 70' })).body).toBe(5);
    expect((await api.post('/v1/table/d%24items/count_rows', { version: 1 })).body).toBe(50);

    const overwritten = await api.send('POST', '/v1/table/d%24items/insert?mode=OVERWRITE', ipc(withVectors(100, 10)), ARROW_STREAM);
    expect(overwritten.body).toMatchObject({ version: 3 });
    expect((await api.post('/v1/table/d%24items/count_rows', {})).body).toBe(10);
    expect((await api.post('/v1/table/d%24items/count_rows', { version: 2 })).body).toBe(75);
    await api.send('POST', '/v1/table/d%24items/insert', ipc(withVectors(0, 100)), ARROW_STREAM);
  });

  it("lists the table's versions a page at a time either way, and describes one of them or the latest", async () => {
    const list = (query: string) => api.post(`/v1/table/d%24items/version/list${query}`, null);
    const versionsOf = (res: Awaited<ReturnType<typeof list>>) => res.body.versions.map((v: { version: number }) => v.version);
    const first = await list('?limit=3');
    expect([versionsOf(first), first.body.page_token]).toEqual([[1, 2, 3], '3']);
    const rest = await list('?limit=3&page_token=3');
    expect([versionsOf(rest), rest.body.page_token]).toEqual([[4], null]);
    const newest = await list('?limit=2&descending=true');
    expect([versionsOf(newest), newest.body.page_token]).toEqual([[4, 3], '3']);
    const older = await list('?limit=2&descending=true&page_token=3');
    expect([versionsOf(older), older.body.page_token]).toEqual([[2, 1], null]);
    expect(versionsOf(await list(''))).toEqual([1, 2, 3, 4]);

    const second = await api.post('/v1/table/d%24items/version/describe', { version: 2 });
    expect(second.status).toBe(200);
    // The same record as the listing's.
    expect(second.body.version).toEqual((await list('?limit=1&page_token=1')).body.versions[0]);
    expect(second.body.version).toMatchObject({ version: 2, manifest_path: expect.stringMatching(/_versions\/\d+\.manifest$/), manifest_size: expect.any(Number) });
    expect((await api.post('/v1/table/d%24items/version/describe', {})).body.version).toEqual(rest.body.versions[0]);
    const missing = await api.post('/v1/table/d%24items/version/describe', { version: 99 });
    expect([missing.status, missing.body.code]).toEqual([404, 11]);
  });

  it('refuses data that does not fit, bytes that are not Arrow, and leaves the table unchanged', async () => {
    const wrong = await api.send('POST', '/v1/table/d%24items/insert', ipc(arrow.tableFromArrays({ other: Float64Array.from([1]) })), ARROW_STREAM);
    expect([wrong.status, (wrong.body as any).code]).toEqual([400, 20]);
    const garbage = await api.send('POST', '/v1/table/d%24items/insert', Buffer.from('definitely not arrow'), ARROW_STREAM);
    expect([garbage.status, (garbage.body as any).code]).toEqual([400, 13]);
    const empty = await api.send('POST', '/v1/table/d%24items/insert', Buffer.alloc(0), ARROW_STREAM);
    expect((empty.body as any).code).toBe(13);
    const badMode = await api.send('POST', '/v1/table/d%24items/insert?mode=upsert', ipc(withVectors(0, 1)), ARROW_STREAM);
    expect([badMode.status, (badMode.body as any).code]).toEqual([400, 13]);
    expect((await api.post('/v1/table/d%24items/count_rows', {})).body).toBe(110);
    const missing = await api.send('POST', '/v1/table/d%24nothing/insert', ipc(withVectors(0, 1)), ARROW_STREAM);
    expect([missing.status, (missing.body as any).code]).toEqual([404, 4]);
  });

  it("reads a body sent without a content type as its route reads bodies, as Lance's REST namespace client sends Arrow streams", async () => {
    const created = await api.send('POST', '/v1/table/d%24untyped/create', ipc(rows(0, 4)), {});
    expect(created.status).toBe(200);
    const inserted = await api.send('POST', '/v1/table/d%24untyped/insert', ipc(rows(4, 2)), {});
    expect(inserted.status).toBe(200);
    const merged = await api.send('POST', '/v1/table/d%24untyped/merge_insert?on=id&when_not_matched_insert_all=true', ipc(rows(5, 3)), {});
    expect([merged.status, (merged.body as any).num_inserted_rows]).toEqual([200, 2]);
    // A JSON body without a content type: a Buffer, since fetch calls a string text/plain.
    const counted = await api.send('POST', '/v1/table/d%24untyped/count_rows', Buffer.from(JSON.stringify({ predicate: 'id >= 4' })), {});
    expect([counted.status, counted.body]).toEqual([200, 4]);
    const typedOtherwise = await api.send('POST', '/v1/table/d%24untyped/insert', ipc(rows(8, 1)), { 'content-type': 'application/octet-stream' });
    expect([typedOtherwise.status, (typedOtherwise.body as any).code]).toEqual([415, 13]);
    expect((typedOtherwise.body as any).error).toContain('application/vnd.apache.arrow.stream');
    const textForJson = await api.send('POST', '/v1/table/d%24untyped/count_rows', '{}', { 'content-type': 'text/plain' });
    expect([textForJson.status, (textForJson.body as any).code]).toEqual([415, 13]);
    expect((await api.post('/v1/table/d%24untyped/count_rows', {})).body).toBe(8);
    // The same client asks for a count and a table's tags with GET, its paging in the query.
    const got = await api.get('/v1/table/d%24untyped/count_rows?delimiter=%24');
    expect([got.status, got.headers.get('content-type'), got.body]).toEqual([200, 'application/json; charset=utf-8', 8]);
    for (const tag of ['a', 'b']) expect((await api.post('/v1/table/d%24untyped/tags/create', { tag, version: 1 })).status).toBe(200);
    const page = await api.get('/v1/table/d%24untyped/tags/list?delimiter=%24&limit=1');
    expect([page.status, Object.keys(page.body.tags), page.body.page_token]).toEqual([200, ['a'], 'a']);
    const rest = await api.get('/v1/table/d%24untyped/tags/list?page_token=a');
    expect(Object.keys(rest.body.tags)).toEqual(['b']);
    expect((await api.get('/v1/table/d%24nothing/count_rows')).body.code).toBe(4);
    // What a GET cannot carry is refused, not answered without.
    const versioned = await api.get('/v1/table/d%24untyped/count_rows?version=1&predicate=id%3E2');
    expect([versioned.status, versioned.body.code]).toEqual([400, 13]);
    expect(versioned.body.error).toContain("reads no 'version', 'predicate'");
    expect((await fetch(`${server.url}/v1/table/d%24untyped/count_rows`, { method: 'HEAD' })).status).not.toBe(200);
    // An operation this server does not serve answers so, whatever its body.
    for (const headers of [{}, { 'content-type': 'application/x-www-form-urlencoded' }] as Record<string, string>[]) {
      const unserved = await api.send('POST', '/v1/nothing/here', Buffer.from('a=b'), headers);
      expect([unserved.status, (unserved.body as any).code]).toEqual([406, 0]);
    }
  });

  it('creates a declared-only table on its first insert', async () => {
    await api.post('/v1/table/d%24later/declare', {});
    expect((await api.post('/v1/table/d%24later/describe?check_declared=true', {})).body.is_only_declared).toBe(true);
    expect((await api.post('/v1/table/d%24later/count_rows', {})).body).toBe(0);
    const res = await api.send('POST', '/v1/table/d%24later/insert', ipc(rows(0, 3)), ARROW_STREAM);
    expect(res.status).toBe(200);
    expect((res.body as any).version).toBe(1);
    expect((await api.post('/v1/table/d%24later/describe?check_declared=true', {})).body.is_only_declared).toBe(false);
    expect((await api.post('/v1/table/d%24later/count_rows', {})).body).toBe(3);
  });

  it('answers queries as an Arrow IPC file: vector, filter, columns, offset, row ids, versions', async () => {
    const res = await api.post('/v1/table/d%24items/query', {
      vector: { single_vector: [Math.sin(42), Math.cos(42)] },
      k: 3,
      columns: { column_names: ['id', 'text'] },
      with_row_id: true,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/vnd.apache.arrow.file');
    const raw = await (await fetch(`${server.url}/v1/table/d%24items/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vector: { single_vector: [Math.sin(42), Math.cos(42)] }, k: 3, columns: { column_names: ['id', 'text'] }, with_row_id: true }),
    })).arrayBuffer();
    const table = arrow.tableFromIPC(new Uint8Array(raw));
    expect(table.numRows).toBe(3);
    expect(table.getChild('id')!.get(0)).toBe(42);
    expect(table.schema.fields.map((f) => f.name)).toEqual(expect.arrayContaining(['id', 'text', '_rowid']));

    const filtered = await queryRows(server.url, { k: 100, filter: 'id < 5', columns: { column_names: ['id'] } });
    expect(filtered.map((r) => r.id).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
    const paged = await queryRows(server.url, { k: 2, offset: 3, filter: 'id < 10' });
    expect(paged).toHaveLength(2);
    const old = await queryRows(server.url, { k: 1000, version: 1, columns: { column_names: ['id'] } });
    expect(old).toHaveLength(50);
    const aliased = await queryRows(server.url, { k: 1, filter: 'id = 7', columns: { column_aliases: { ident: 'id' } } });
    expect(aliased[0]).toEqual({ ident: 7 });
    const multi = await queryRows(server.url, { k: 2, vector: { multi_vector: [[0, 1], [1, 0]] }, columns: { column_names: ['id'] } });
    expect(multi.length).toBeGreaterThanOrEqual(2);

    // Nothing matches: no rows, and still the query's columns, for whoever reads the schema.
    const columnsOf = async (body: object) => {
      const bytes = await (await fetch(`${server.url}/v1/table/d%24items/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).arrayBuffer();
      const empty = arrow.tableFromIPC(new Uint8Array(bytes));
      expect(empty.numRows).toBe(0);
      return empty.schema.fields.map((f) => f.name);
    };
    expect(await columnsOf({ k: 5, vector: [], filter: 'id < 0', columns: { column_names: ['id', 'text'] } })).toEqual(['id', 'text']);
    expect(await columnsOf({ k: 5, vector: { single_vector: [0, 1] }, filter: 'id < 0', prefilter: true, columns: { column_names: ['id'] } })).toEqual(['id', '_distance']);
    expect(await columnsOf({ k: 5, vector: [], offset: 100_000, with_row_id: true, columns: { column_names: ['text'] } })).toEqual(['text', '_rowid']);
  });

  it('refuses bad queries with code 13, and a column the table does not have with code 12', async () => {
    for (const body of [
      { k: -1 },
      { k: 10_000_000 },
      {},
      { k: 1, filter: 'id >>>> ' },
      { k: 1, vector: { single_vector: [1, 2] }, distance_type: 'manhattan' },
      { k: 1, vector: { single_vector: [1, 'two'] } },
      { k: 1, vector: { multi_vector: [[1, 2], [3, null]] } },
      { k: 1, vector: 'near 1,2' },
    ]) {
      const res = await api.post('/v1/table/d%24items/query', body);
      expect([res.status, res.body.code]).toEqual([400, 13]);
    }
    for (const body of [{ k: 1, filter: 'no_such_column > 3' }, { k: 1, columns: { column_names: ['nope'] } }]) {
      const res = await api.post('/v1/table/d%24items/query', body);
      expect([res.status, res.body.code]).toEqual([404, 12]);
    }
    const missingVersion = await api.post('/v1/table/d%24items/query', { k: 1, version: 99 });
    expect([missingVersion.status, missingVersion.body.code]).toEqual([404, 11]);
    // k: 0 (the spec's minimum) answers the query's columns and no rows.
    const none = await api.post('/v1/table/d%24items/query', { k: 0 });
    expect(none.status).toBe(200);
  });

  it('records every server-side write in the table’s history', async () => {
    const types = (await api.get('/v1/history/table/d%24items')).body.events.map((e: { type: string }) => e.type);
    expect(types.filter((t: string) => t === 'TableDataChanged')).toHaveLength(4);
    if (managed) expect(types.filter((t: string) => t === 'TableVersionCreated')).toHaveLength(4);
  });
});

async function queryRows(url: string, body: unknown): Promise<Record<string, number>[]> {
  const res = await fetch(`${url}/v1/table/d%24items/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  return arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer())).toArray().map((r) => r.toJSON());
}
