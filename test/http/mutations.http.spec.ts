import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

describe.each([
  ['managed', true],
  ['unmanaged', false],
])('merge insert, update, delete, schema changes, stats and tags (%s)', (_mode, managed) => {
  let server: RunningServer;
  let api: Api;
  const count = async (predicate?: string) => (await api.post('/v1/table/m/count_rows', predicate ? { predicate } : {})).body as number;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { MANAGED_VERSIONING: String(managed) } });
    api = new Api(server.url);
    expect((await api.send('POST', '/v1/table/m/create', arrowStream(sampleTable(0, 100)), ARROW_STREAM)).status).toBe(200);
  });
  afterAll(() => server?.stop());

  it('merge-inserts by key: updates matches and inserts the rest', async () => {
    const res = await api.send(
      'POST',
      '/v1/table/m/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true',
      arrowStream(sampleTable(90, 20)),
      ARROW_STREAM,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ num_updated_rows: 10, num_inserted_rows: 10, num_deleted_rows: 0, version: 2 });
    expect(await count()).toBe(110);
    // No clause: the spec's flags all default to false, so the merge changes nothing and commits nothing.
    const noAction = await api.send<any>('POST', '/v1/table/m/merge_insert?on=id', arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    expect(noAction.status).toBe(200);
    expect(noAction.body).toMatchObject({ num_updated_rows: 0, num_inserted_rows: 0, num_deleted_rows: 0, version: 2 });
    expect(await count()).toBe(110);
    const noKey = await api.send('POST', '/v1/table/m/merge_insert?when_not_matched_insert_all=true', arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    expect((noKey.body as any).code).toBe(13);
    // A composite key as Lance's REST namespace client sends one: `on` repeated, each value a column.
    const repeated = await api.send<any>('POST', '/v1/table/m/merge_insert?on=id&on=category', arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    expect([repeated.status, repeated.body.num_inserted_rows]).toEqual([200, 0]);
    const ghost = await api.send<any>('POST', '/v1/table/m/merge_insert?on=id&on=ghost&when_not_matched_insert_all=true', arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    expect([ghost.status, ghost.body.code]).toEqual([404, 12]);
    expect(await count()).toBe(110);
  });

  it('updates rows with SQL expressions and deletes by predicate', async () => {
    const updated = await api.post('/v1/table/m/update', { predicate: 'id < 10', updates: [['category', "'updated'"]] });
    expect(updated.body).toMatchObject({ updated_rows: 10, version: 3 });
    expect(await count("category = 'updated'")).toBe(10);
    const deleted = await api.post('/v1/table/m/delete', { predicate: 'id >= 100' });
    expect(deleted.body).toMatchObject({ num_deleted_rows: 10, version: 4 });
    expect(await count()).toBe(100);
    for (const [path, body] of [
      ['update', { updates: [] }],
      ['delete', {}],
      ['delete', { predicate: 'id >>> 3' }],
    ] as const) {
      const res = await api.post(`/v1/table/m/${path}`, body);
      expect([res.status, res.body.code]).toEqual([400, 13]);
    }
    const unknown = await api.post('/v1/table/m/update', { predicate: 'id < 1', updates: [['nope', '1']] });
    expect([unknown.status, unknown.body.code]).toEqual([404, 12]);
    expect(await count()).toBe(100);
  });

  it('adds, alters and drops columns, and updates field metadata', async () => {
    const added = await api.post('/v1/table/m/add_columns', { new_columns: [{ name: 'double_id', expression: 'id * 2' }] });
    expect(added.status).toBe(200);
    const twiceOver = await api.post('/v1/table/m/alter_columns', { alterations: [{ path: 'double_id', rename: 'x' }, { path: 'double_id', rename: 'y' }] });
    expect([twiceOver.status, twiceOver.body.code]).toEqual([400, 13]);
    expect(twiceOver.body.error).toContain('alterations: names a column more than once');
    const altered = await api.post('/v1/table/m/alter_columns', { alterations: [{ path: 'double_id', rename: 'twice' }] });
    expect(altered.status).toBe(200);
    const meta = await api.post('/v1/table/m/update_field_metadata', { updates: [{ path: 'twice', metadata: { unit: 'count' } }] });
    expect(meta.status).toBe(200);
    expect(meta.body.fields).toEqual({ twice: { unit: 'count' } });
    const described = await api.post('/v1/table/m/describe?load_detailed_metadata=true', {});
    const twice = described.body.schema.fields.find((f: any) => f.name === 'twice');
    expect(twice.metadata).toEqual({ unit: 'count' });
    const dropped = await api.post('/v1/table/m/drop_columns', { columns: ['twice'] });
    expect(dropped.status).toBe(200);
    const after = await api.post('/v1/table/m/describe?load_detailed_metadata=true', {});
    expect(after.body.schema.fields.map((f: any) => f.name)).not.toContain('twice');
    const missing = await api.post('/v1/table/m/drop_columns', { columns: ['ghost'] });
    expect([missing.status, missing.body.code]).toEqual([404, 12]);
    // The catalog commits a schema metadata version itself, which it can only do as the manifest store.
    const schemaMeta = await api.post('/v1/table/m/schema_metadata/update', { a: 'b' });
    if (managed) expect([schemaMeta.status, schemaMeta.body]).toEqual([200, { a: 'b' }]);
    else expect([schemaMeta.status, schemaMeta.body.code]).toEqual([406, 0]);
  });

  it("refuses to add or rename a column to one Lance adds to query answers, and the table's queries go on", async () => {
    const versions = async () => (await api.post('/v1/table/m/version/list', null)).body.versions.length;
    const before = await versions();
    for (const system of ['_rowid', '_rowaddr', '_row_last_updated_at_version', '_distance']) {
      const added = await api.post('/v1/table/m/add_columns', { new_columns: [{ name: system, expression: '1' }] });
      expect([added.status, added.body.code]).toEqual([400, 13]);
      expect(added.body.error).toContain('new_columns.0.name');
      const renamed = await api.post('/v1/table/m/alter_columns', { alterations: [{ path: 'id', rename: system }] });
      expect([renamed.status, renamed.body.code]).toEqual([400, 13]);
      expect(renamed.body.error).toContain('alterations.0.rename');
    }
    expect(await versions()).toBe(before);
    const query = await api.post('/v1/table/m/query', { k: 5, vector: [], with_row_id: true });
    expect(query.status).toBe(200);
  });

  it('reports table statistics', async () => {
    const stats = await api.post('/v1/table/m/stats', {});
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ num_rows: 100, num_indices: 0 });
    expect(stats.body.total_bytes).toBeGreaterThan(0);
    expect(stats.body.fragment_stats.num_fragments).toBeGreaterThan(0);
  });

  it('creates, reads, moves, lists and deletes tags', async () => {
    const created = await api.post('/v1/table/m/tags/create', { tag: 'first', version: 1 });
    expect(created.status).toBe(200);
    expect(typeof created.body.transaction_id).toBe('string');
    expect((await api.post('/v1/table/m/tags/version', { tag: 'first' })).body).toEqual({ version: 1 });
    expect((await api.post('/v1/table/m/tags/create', { tag: 'first', version: 2 })).body.code).toBe(9);
    expect((await api.post('/v1/table/m/tags/create', { tag: 'bad', version: 99 })).body.code).toBe(11);
    expect((await api.post('/v1/table/m/tags/create', { tag: '../x', version: 1 })).body.code).toBe(13);
    await api.post('/v1/table/m/tags/create', { tag: 'second', version: 2 });
    expect((await api.post('/v1/table/m/tags/update', { tag: 'first', version: 3 })).status).toBe(200);
    const listed = await api.post('/v1/table/m/tags/list', {});
    expect(Object.keys(listed.body.tags)).toEqual(['first', 'second']);
    expect(listed.body.tags.first.version).toBe(3);
    const paged = await api.post('/v1/table/m/tags/list?limit=1', {});
    expect([Object.keys(paged.body.tags), paged.body.page_token]).toEqual([['first'], 'first']);
    expect((await api.post('/v1/table/m/tags/delete', { tag: 'second' })).status).toBe(200);
    const gone = await api.post('/v1/table/m/tags/version', { tag: 'second' });
    expect([gone.status, gone.body.code]).toEqual([404, 8]);
    const types = (await api.get('/v1/history/table/m')).body.events.map((e: any) => e.type);
    expect(types.filter((t: string) => t === 'TableTagChanged')).toHaveLength(4);
  });

  it('reads the table as of a tag', async () => {
    const res = await fetch(`${server.url}/v1/table/m/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ k: 1000, version: 1, columns: { column_names: ['id'] } }),
    });
    expect(arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer())).numRows).toBe(100);
  });

  it('keeps the version a tag points at when version records are deleted', async () => {
    // Tag 'first' points at version 3 (above): its record stays, alone or in a batch. Without managed
    // versioning the catalog deletes no version records at all.
    const refusal = managed ? "version 3 of table 'm' is tagged 'first'" : 'does not use managed versioning';
    const alone = await api.post('/v1/table/m/version/delete', { ranges: [{ start_version: 0, end_version: -1 }] });
    expect([alone.status, alone.body.code]).toEqual([409, 19]);
    expect(alone.body.error).toContain(refusal);
    const batched = await api.post('/v1/table/batch-commit', { operations: [{ delete_table_versions: { id: ['m'], ranges: [{ start_version: 3, end_version: 4 }] } }] });
    expect([batched.status, batched.body.code]).toEqual([409, 19]);
    expect(batched.body.error).toContain(refusal);
    expect((await api.post('/v1/table/m/describe', { version: 3 })).status).toBe(200);
    expect((await api.post('/v1/table/m/tags/version', { tag: 'first' })).body).toEqual({ version: 3 });
    const untagged = await api.post('/v1/table/m/version/delete', { ranges: [{ start_version: 2, end_version: 3 }] });
    if (managed) expect([untagged.status, untagged.body.deleted_count]).toEqual([200, 1]);
    else expect([untagged.status, untagged.body.code]).toEqual([409, 19]);
  });
});
