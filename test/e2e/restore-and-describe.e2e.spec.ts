import * as lancedb from '@lancedb/lancedb';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

describe.each([
  ['managed', true],
  ['unmanaged', false],
])('detailed describe and restore on real datasets (%s)', (_mode, managed) => {
  let server: RunningServer;
  let api: Api;
  let db: lancedb.Connection;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { MANAGED_VERSIONING: String(managed) } });
    api = new Api(server.url);
    db = await lancedb.connectNamespace('rest', { uri: server.url });
    await db.createNamespace(['r']);
    const table = await db.createTable('t', [{ id: 1, name: 'a', vector: [1, 2, 3] }, { id: 3, name: 'c', vector: [7, 8, 9] }], ['r']);
    await table.add([{ id: 2, name: 'b', vector: [4, 5, 6] }]);
    await table.delete('id = 1');
    table.close();
  });
  afterAll(async () => {
    db?.close();
    await server?.stop();
  });

  it('loads version, schema and stats from the dataset', async () => {
    const res = await api.post('/v1/table/r%24t/describe?load_detailed_metadata=true', {});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ table: 't', namespace: ['r'], version: 3, is_only_declared: false });
    expect(res.body.schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'name', 'vector']);
    const vec = res.body.schema.fields[2];
    expect(vec.type).toMatchObject({ type: 'fixed_size_list', length: 3 });
    expect(res.body.stats.num_fragments).toBe(2);
    expect(res.body.stats.num_deleted_rows).toBe(1);

    const old = await api.post('/v1/table/r%24t/describe?load_detailed_metadata=true', { version: 1 });
    expect(old.body.version).toBe(1);
  });

  it('restores an older version as a new latest version, recorded in the history', async () => {
    const res = await api.post('/v1/table/r%24t/restore', { version: 1 });
    expect(res.status).toBe(200);
    expect(typeof res.body.transaction_id).toBe('string');
    const tx = await api.post(`/v1/transaction/${res.body.transaction_id}/describe`, {});
    expect(tx.body.properties.operation).toBe('RestoreTable');

    const table = await db.openTable('t', ['r']);
    expect(await table.version()).toBe(4);
    expect(await table.countRows()).toBe(2);
    expect((await table.query().toArray()).map((r) => r.id).sort()).toEqual([1, 3]);
    table.close();

    const types = (await api.get('/v1/history/table/r%24t')).body.events.map((e: { type: string }) => e.type);
    expect(types[types.length - 1]).toBe('TableRestored');
    if (managed) expect(types.filter((t: string) => t === 'TableVersionCreated')).toHaveLength(4);

    const missing = await api.post('/v1/table/r%24t/restore', { version: 42 });
    expect([missing.status, missing.body.code]).toEqual([404, 11]);
    const noVersion = await api.post('/v1/table/r%24t/restore', {});
    expect([noVersion.status, noVersion.body.code]).toEqual([400, 13]);
  });
});
