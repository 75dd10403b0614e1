import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

/** CreateMaterializedView and RefreshMaterializedView, interoperable with lancedb 0.39's own views through this catalog. */
describe('materialized views', () => {
  let server: RunningServer;
  let api: Api;
  let db: lancedb.Connection;
  const rows = (ids: number[]) => ids.map((id) => ({ id, x: id * 1.5 }));
  const schemaOf = (names: string[]) =>
    Buffer.from(arrow.tableToIPC(arrow.tableFromArrays(Object.fromEntries(names.map((n) => [n, new Float64Array(0)]))), 'stream')).toString('base64');
  const settle = (job: string) =>
    waitFor(() => api.post(`/v1/transaction/${job}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000);

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    db = await lancedb.connectNamespace('rest', { uri: server.url });
    // Views keep their provenance by the source's stable row ids.
    await db.createTable('src', rows(Array.from({ length: 20 }, (_, i) => i)), [], { storageOptions: { newTableEnableStableRowIds: 'true' } });
  }, 60_000);
  afterAll(async () => {
    db?.close();
    await server?.stop();
  });

  it('creates a view lancedb opens as its own, refreshes it by a followable job, incrementally after the source grows', async () => {
    const created = await api.post('/v1/materialized_view/view/create', {
      kind: 'query',
      source_query: JSON.stringify({ source_table: 'src', select: { id: 'id', y: 'x * 10' }, filter: 'id < 5' }),
      output_schema: schemaOf(['id', 'y']),
      with_no_data: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ version: expect.any(Number), job_id: expect.any(String) });
    const first = await settle(created.body.job_id);
    expect(first.body).toMatchObject({ status: 'Succeeded', properties: { operation: 'RefreshMaterializedView', mode: 'rebuild', rows_written: '5' } });
    expect((await api.post('/v1/table/view/count_rows', {})).body).toBe(5);

    const view = await db.openMaterializedView('view');
    expect(await view.definition()).toMatchObject({ sourceTable: 'src', filter: 'id < 5' });
    const source = await db.openTable('src');
    await source.add(rows([-3, -2, -1, 30]));
    const refreshed = await api.post('/v1/materialized_view/view/refresh', {});
    expect(refreshed.status).toBe(202);
    const second = await settle(refreshed.body.job_id);
    expect(second.body.status).toBe('Succeeded');
    expect((await api.post('/v1/table/view/count_rows', {})).body).toBe(8);
    const ys = (await (await db.openTable('view')).query().toArray()).map((r) => r.y as number).sort((a, b) => a - b);
    expect(ys).toEqual([-45, -30, -15, 0, 15, 30, 45, 60]);
    source.close();
  }, 120_000);

  it('refreshes a view lancedb created; lancedb then finds it up to date', async () => {
    const made = await db.createMaterializedView('ids', 'src', { select: ['id'] });
    const job = (await api.post('/v1/materialized_view/ids/refresh', {})).body.job_id;
    expect((await settle(job)).body.status).toBe('Succeeded');
    expect((await api.post('/v1/table/ids/count_rows', {})).body).toBe(24);
    expect((await made.refresh()).mode).toBe('no_op');
    const history = (await api.get('/v1/history/table/ids')).body.events.map((e: { type: string }) => e.type);
    expect(history).toEqual(expect.arrayContaining(['TableDeclared', 'MaterializedViewRefreshRequested']));
  }, 60_000);

  it('refuses what it cannot do with the spec\'s codes', async () => {
    const ok = { kind: 'query', source_query: JSON.stringify({ source_table: 'src', select: ['id'] }), output_schema: schemaOf(['id']) };
    // A view outside the root namespace is refused for what it is, once its namespace exists; a missing namespace is 404.
    expect((await api.post('/v1/namespace/ns/create', {})).status).toBe(200);
    const cases: Array<[string, unknown, number, number]> = [
      ['/v1/materialized_view/u/create', { ...ok, kind: 'udtf' }, 406, 0],
      ['/v1/materialized_view/u/create', { ...ok, auto_refresh: true }, 406, 0],
      ['/v1/materialized_view/ns%24u/create', ok, 406, 0],
      ['/v1/materialized_view/nons%24u/create', ok, 404, 1],
      ['/v1/materialized_view/u/create', { ...ok, source_query: JSON.stringify({ source_table: 'nowhere', select: ['id'] }) }, 404, 4],
      ['/v1/materialized_view/view/create', ok, 409, 5],
      ['/v1/materialized_view/u/create', { ...ok, source_query: 'select id from src' }, 400, 13],
      ['/v1/materialized_view/u/create', { ...ok, output_schema: schemaOf(['other']) }, 400, 13],
      ['/v1/materialized_view/u/create', { ...ok, output_schema: 'not arrow' }, 400, 13],
      ['/v1/materialized_view/u/create', { kind: 'query' }, 400, 13],
      ['/v1/materialized_view/src/refresh', {}, 400, 13],
      ['/v1/materialized_view/nowhere/refresh', {}, 404, 4],
      ['/v1/materialized_view/view/refresh', { output_limit: 10 }, 400, 13],
      ['/v1/materialized_view/view/refresh', { max_rows_per_fragment: 100 }, 406, 0],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await api.post(path, body);
      expect({ path, body, status: res.status, code: res.body.code }).toEqual({ path, body, status, code });
    }
    expect((await api.post('/v1/table/u/exists', {})).status).toBe(404);
  }, 60_000);
});
