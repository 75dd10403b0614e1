/** The fields of the materialized view operations (see coverage.ts for the tokens). */
import * as arrow from 'apache-arrow';
import { ARROW, T, arrowStream, count, createTable, expectError, ids, ok, revision, rows, schemaOf, settled, suiteServer } from './fixtures';
import { covers } from './coverage';

const STABLE_ROW_IDS = `?storage_options=${encodeURIComponent(JSON.stringify({ new_table_enable_stable_row_ids: 'true' }))}`;

describe('materialized views, field by field', () => {
  const s = suiteServer();
  const api = () => s.api;
  const definition = (select: object, extra: object = {}) => JSON.stringify({ source_table: 'src', select, ...extra });
  const create = (name: string, body: object) => api().post(`/v1/materialized_view/${name}/create`, body);
  const refresh = (name: string, body: object = {}) => api().post(`/v1/materialized_view/${name}/refresh`, body);
  const idSchema = schemaOf({ id: new arrow.Int32() });

  beforeAll(async () => {
    // Views keep their provenance by the source's stable row ids. Version 1 holds 3 rows, version 2 holds 5.
    await createTable(api(), ['src'], rows(0, 3), STABLE_ROW_IDS);
    await ok(api().send('POST', `${T('src')}/insert`, arrowStream(rows(3, 2)), ARROW));
  });

  covers(
    ['CreateMaterializedView#201', 'CreateMaterializedView.kind', 'CreateMaterializedView.source_query', 'CreateMaterializedView.output_schema', 'CreateMaterializedView.with_no_data'],
    'defines the view of the query with the schema given: empty (with_no_data, the default), or filled by a first refresh it answers the job of',
    async () => {
      const empty = await ok(create('empty', { kind: 'query', source_query: definition({ id: 'id', twice: 'id * 2' }, { filter: 'id < 4' }), output_schema: schemaOf({ id: new arrow.Int32(), twice: new arrow.Int32() }) }), 201);
      expect(empty.body).toEqual({ version: expect.any(Number) });
      expect(await count(api(), ['empty'])).toBe(0);
      const filled = await ok(create('filled', { kind: 'query', source_query: definition({ id: 'id', twice: 'id * 2' }, { filter: 'id < 4' }), output_schema: schemaOf({ id: new arrow.Int32(), twice: new arrow.Int32() }), with_no_data: false }), 201);
      expect(filled.body).toEqual({ version: expect.any(Number), job_id: expect.any(String) });
      expect((await settled(api(), filled.body.job_id)).status).toBe('Succeeded');
      expect((await fetchRows('filled')).map((r) => [r.id, r.twice])).toEqual([
        [0, 0],
        [1, 2],
        [2, 4],
        [3, 6],
      ]);
      // The schema must be the query's; a query that is not lancedb's definition is refused.
      expectError(await create('bad', { kind: 'query', source_query: definition(['id']), output_schema: schemaOf({ other: new arrow.Int32() }) }), 400, 13);
      expectError(await create('bad', { kind: 'query', source_query: 'select id from src', output_schema: idSchema }), 400, 13);
      expectError(await create('bad', { kind: 'query', source_query: JSON.stringify({ source_table: 'nowhere', select: ['id'] }), output_schema: idSchema }), 404, 4);
    },
  );

  covers(['CreateMaterializedView#409'], 'a name taken is 409 code 5, and the view stays', async () => {
    expectError(await create('filled', { kind: 'query', source_query: definition(['id']), output_schema: idSchema }), 409, 5);
    expect(await count(api(), ['filled'])).toBe(4);
  });

  covers(['CreateMaterializedView.udtf_spec'], 'a UDTF descriptor makes a udtf or chunker view, refused with 406 code 0; with a query view it is 400 code 13', async () => {
    const spec = { kind: 'udtf', udtf: 'e30=', udtf_sha: '0'.repeat(64), udtf_name: 'split', udtf_version: '1' };
    const before = await revision(api());
    for (const kind of ['udtf', 'chunker']) expectError(await create('u', { kind, source_query: definition(['id']), output_schema: idSchema, udtf_spec: { ...spec, kind } }), 406, 0, /kind/);
    expectError(await create('u', { kind: 'query', source_query: definition(['id']), output_schema: idSchema, udtf_spec: spec }), 400, 13, /udtf_spec/);
    expect(await revision(api())).toBe(before);
  });

  covers(['CreateMaterializedView.auto_refresh'], 'refreshing by itself is refused with 406 code 0 naming auto_refresh (lancedb refreshes a view when asked); false is what it does', async () => {
    expectError(await create('auto', { kind: 'query', source_query: definition(['id']), output_schema: idSchema, auto_refresh: true }), 406, 0, /auto_refresh/);
    await ok(create('auto', { kind: 'query', source_query: definition(['id']), output_schema: idSchema, auto_refresh: false }), 201);
  });

  covers(['RefreshMaterializedView#202', 'RefreshMaterializedView.src_version'], "refreshes the view from the source's latest version, or from the version given", async () => {
    await ok(create('ids', { kind: 'query', source_query: definition(['id']), output_schema: idSchema }), 201);
    const older = await ok(refresh('ids', { src_version: 1 }), 202);
    expect(older.body).toEqual({ job_id: expect.any(String) });
    expect(await settled(api(), older.body.job_id)).toMatchObject({ status: 'Succeeded', properties: { source_version: '1', rows_written: '3' } });
    expect(await ids(s.url, ['ids'], { k: 10, vector: [] })).toEqual([0, 1, 2]);
    const latest = (await ok(refresh('ids'), 202)).body.job_id;
    expect(await settled(api(), latest)).toMatchObject({ status: 'Succeeded', properties: { source_version: '2' } });
    expect(await ids(s.url, ['ids'], { k: 10, vector: [] })).toEqual([0, 1, 2, 3, 4]);
    expectError(await refresh('src'), 400, 13, /not a materialized view/);
  });

  covers(['RefreshMaterializedView.output_limit'], 'a chunker view\'s cap on a query view is 400 code 13, as the spec says', async () => {
    expectError(await refresh('ids', { output_limit: 2 }), 400, 13, /output_limit/);
  });

  covers(['RefreshMaterializedView.max_rows_per_fragment'], "is refused with 406 code 0 naming it: lancedb's refresh writes fragments at its own size", async () => {
    const before = await revision(api());
    expectError(await refresh('ids', { max_rows_per_fragment: 1 }), 406, 0, /max_rows_per_fragment/);
    expect(await revision(api())).toBe(before);
  });

  covers(
    ['RefreshMaterializedView.concurrency', 'RefreshMaterializedView.intra_applier_concurrency', 'RefreshMaterializedView.source_task_size', 'RefreshMaterializedView.cluster', 'RefreshMaterializedView.manifest'],
    'how a distributed refresh is to run is kept with the job (its transaction\'s properties); a manifest must be JSON',
    async () => {
      const options = { concurrency: 3, intra_applier_concurrency: 2, source_task_size: 1000, cluster: 'cpu-pool', manifest: '{"name":"env","pip":[]}' };
      const job = (await ok(refresh('ids', options), 202)).body.job_id;
      const done = await settled(api(), job);
      expect(done.status).toBe('Succeeded');
      expect(done.properties).toMatchObject(Object.fromEntries(Object.entries(options).map(([k, v]) => [k, String(v)])));
      expectError(await refresh('ids', { manifest: 'not json' }), 400, 13, /manifest/);
    },
  );

  async function fetchRows(name: string) {
    const res = await fetch(`${s.url}${T(name)}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ k: 100, vector: [] }) });
    return arrow
      .tableFromIPC(new Uint8Array(await res.arrayBuffer()))
      .toArray()
      .map((r) => r.toJSON() as Record<string, number>)
      .sort((a, b) => a.id - b.id);
  }
});
