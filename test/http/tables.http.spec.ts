import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

describe('table operations over HTTP', () => {
  let server: RunningServer;
  let api: Api;
  const table = (...parts: string[]) => `/v1/table/${Api.id(parts)}`;

  /** Writes a staging manifest as a Lance client would, and returns its store-form path. */
  const stage = (location: string, version: number, content = `manifest ${version}`) => {
    mkdirSync(join(location, '_versions'), { recursive: true });
    const path = join(location, '_versions', `${version}.manifest-${Math.random().toString(16).slice(2)}`);
    writeFileSync(path, content);
    return path.slice(1);
  };

  beforeAll(async () => {
    server = await startServer({ entry: 'api' });
    api = new Api(server.url);
    await api.post(`/v1/namespace/${Api.id(['db'])}/create`, {});
  });
  afterAll(() => server?.stop());

  it('declares a managed table with a fresh location inside the warehouse', async () => {
    const res = await api.post(`${table('db', 'orders')}/declare`, { id: ['db', 'orders'], properties: { team: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.managed_versioning).toBe(true);
    expect(res.body.location.startsWith(join(server.dataDir, 'warehouse', 'default', 'db'))).toBe(true);
    expect(res.body.location.endsWith('.lance')).toBe(true);
    expect(res.body.storage_options).toEqual({});
    expect(res.body.properties).toEqual({ team: 'x' });
    expect(typeof res.body.transaction_id).toBe('string');

    const again = await api.post(`${table('db', 'orders')}/declare`, {});
    expect([again.status, again.body.code]).toEqual([409, 5]);
    const noNs = await api.post(`${table('nope', 'orders')}/declare`, {});
    expect([noNs.status, noNs.body.code]).toEqual([404, 1]);
  });

  it('describes a table: location, declared state, uri and versions', async () => {
    const plain = await api.post(`${table('db', 'orders')}/describe`, {});
    expect(plain.status).toBe(200);
    expect(plain.body.location).toBeDefined();
    expect(plain.body.managed_versioning).toBe(true);
    expect(plain.body.is_only_declared).toBeUndefined();

    const checked = await api.post(`${table('db', 'orders')}/describe?check_declared=true&with_table_uri=true`, {});
    expect(checked.body.is_only_declared).toBe(true);
    expect(checked.body.table_uri).toBe(`file://${plain.body.location}`);

    const location = plain.body.location as string;
    const created = await api.post(`${table('db', 'orders')}/version/create`, {
      version: 1,
      manifest_path: stage(location, 1),
      naming_scheme: 'V2',
    });
    expect(created.status).toBe(200);
    expect(created.body.version.version).toBe(1);
    expect(created.body.version.manifest_path).toBe(`${location.slice(1)}/_versions/18446744073709551614.manifest`);
    expect(existsSync(`${location}/_versions/18446744073709551614.manifest`)).toBe(true);

    const after = await api.post(`${table('db', 'orders')}/describe?check_declared=true`, {});
    expect(after.body.is_only_declared).toBe(false);
    expect(after.body.version).toBe(1);

    const missingVersion = await api.post(`${table('db', 'orders')}/describe`, { version: 9 });
    expect([missingVersion.status, missingVersion.body.code]).toEqual([404, 11]);
    const missing = await api.post(`${table('db', 'nothing')}/describe`, {});
    expect([missing.status, missing.body.code]).toEqual([404, 4]);
    const missingNs = await api.post(`${table('zzz', 'nothing')}/describe`, {});
    expect([missingNs.status, missingNs.body.code]).toEqual([404, 1]);
  });

  it('answers exists for tables and versions', async () => {
    // The spec: the status is the answer, with no response body.
    const exists = await api.post(`${table('db', 'orders')}/exists`, {});
    expect([exists.status, exists.text, exists.headers.get('content-length'), exists.headers.get('content-type')]).toEqual([200, '', '0', null]);
    expect((await api.post(`${table('db', 'orders')}/exists`, { version: 1 })).status).toBe(200);
    const noVersion = await api.post(`${table('db', 'orders')}/exists`, { version: 2 });
    expect([noVersion.status, noVersion.body.code]).toEqual([404, 11]);
    const noTable = await api.post(`${table('db', 'ghost')}/exists`, {});
    expect([noTable.status, noTable.body.code]).toEqual([404, 4]);
    const negative = await api.post(`${table('db', 'orders')}/exists`, { version: -1 });
    expect([negative.status, negative.body.code]).toEqual([400, 13]);
  });

  it('lists tables in a namespace and everywhere, with and without declared ones', async () => {
    await api.post(`${table('db', 'declared_only')}/declare`, {});
    await api.post(`/v1/namespace/${Api.id(['db', 'sub'])}/create`, {});
    await api.post(`${table('db', 'sub', 'deep')}/declare`, {});
    await api.post(`${table('rooted')}/declare`, {});

    expect((await api.get(`/v1/namespace/${Api.id(['db'])}/table/list`)).body).toEqual({
      tables: ['declared_only', 'orders'],
      page_token: null,
    });
    expect((await api.get(`/v1/namespace/${Api.id(['db'])}/table/list?include_declared=false`)).body.tables).toEqual(['orders']);
    expect((await api.get(`/v1/namespace/${Api.id(['db'])}/table/list?limit=1`)).body).toEqual({
      tables: ['declared_only'],
      page_token: 'declared_only',
    });
    expect((await api.get(`/v1/namespace/${Api.id(['db'])}/table/list?page_token=declared_only`)).body.tables).toEqual(['orders']);

    const all = await api.get('/v1/table');
    expect(all.body.tables).toEqual(['db$declared_only', 'db$orders', 'db$sub$deep', 'rooted']);
    const dotted = await api.get('/v1/table?delimiter=.&include_declared=false');
    expect(dotted.body.tables).toEqual(['db.orders']);
    const paged = await api.get('/v1/table?limit=2&page_token=db%24orders');
    expect(paged.body).toEqual({ tables: ['db$sub$deep', 'rooted'], page_token: null });
  });

  it('renames a table within and across namespaces, keeping its location', async () => {
    const before = (await api.post(`${table('db', 'declared_only')}/describe`, {})).body.location;
    const renamed = await api.post(`${table('db', 'declared_only')}/rename`, { new_table_name: 'renamed' });
    expect(renamed.status).toBe(200);
    expect(typeof renamed.body.transaction_id).toBe('string');
    expect((await api.post(`${table('db', 'renamed')}/describe`, {})).body.location).toBe(before);
    expect((await api.post(`${table('db', 'declared_only')}/exists`, {})).status).toBe(404);

    const moved = await api.post(`${table('db', 'renamed')}/rename`, { new_table_name: 'moved', new_namespace_id: ['db', 'sub'] });
    expect(moved.status).toBe(200);
    expect((await api.post(`${table('db', 'sub', 'moved')}/describe`, {})).body.location).toBe(before);

    const clash = await api.post(`${table('db', 'sub', 'moved')}/rename`, { new_table_name: 'deep' });
    expect([clash.status, clash.body.code]).toEqual([409, 5]);
    const noNs = await api.post(`${table('db', 'sub', 'moved')}/rename`, { new_table_name: 'x', new_namespace_id: ['nowhere'] });
    expect([noNs.status, noNs.body.code]).toEqual([404, 1]);
    const missingName = await api.post(`${table('db', 'sub', 'moved')}/rename`, {});
    expect([missingName.status, missingName.body.code]).toEqual([400, 13]);
  });

  it('drops a table and hands out a new location when the name is declared again', async () => {
    const first = (await api.post(`${table('db', 'sub', 'deep')}/describe`, {})).body.location;
    const dropped = await api.post(`${table('db', 'sub', 'deep')}/drop`, {});
    expect(dropped.status).toBe(200);
    expect(dropped.body.id).toEqual(['db', 'sub', 'deep']);
    expect(dropped.body.location).toBe(first);
    const again = await api.post(`${table('db', 'sub', 'deep')}/declare`, {});
    expect(again.body.location).not.toBe(first);
    const missing = await api.post(`${table('db', 'sub', 'ghost')}/drop`, {});
    expect([missing.status, missing.body.code]).toEqual([404, 4]);
  });

  it('deregisters a table, keeps its files, and registers it back with its versions', async () => {
    const location = (await api.post(`${table('db', 'orders')}/describe`, {})).body.location;
    const gone = await api.post(`${table('db', 'orders')}/deregister`, {});
    expect(gone.status).toBe(200);
    expect(gone.body.location).toBe(location);
    expect(existsSync(`${location}/_versions/18446744073709551614.manifest`)).toBe(true);
    expect((await api.post(`${table('db', 'orders')}/exists`, {})).status).toBe(404);

    const back = await api.post(`${table('db', 'orders2')}/register`, { location, properties: { back: 'yes' } });
    expect(back.status).toBe(200);
    expect(back.body.location).toBe(location);
    const versions = await api.post(`${table('db', 'orders2')}/version/list`, null);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);

    const twice = await api.post(`${table('db', 'orders3')}/register`, { location });
    expect([twice.status, twice.body.code]).toEqual([400, 13]);
  });

  it('refuses register locations outside the warehouse', async () => {
    for (const location of ['/etc', `${server.dataDir}/warehouse/../outside`, 's3://bucket/x', 'relative/path', 'file:///tmp']) {
      const res = await api.post(`${table('db', 'evil')}/register`, { location });
      expect([res.status, res.body.code]).toEqual([400, 13]);
    }
    const noLocation = await api.post(`${table('db', 'evil')}/register`, {});
    expect([noLocation.status, noLocation.body.code]).toEqual([400, 13]);
    expect((await api.post(`${table('db', 'evil')}/exists`, {})).status).toBe(404);
  });

  it('refuses the root namespace as a table id', async () => {
    const res = await api.post(`/v1/table/%24/declare`, {});
    expect([res.status, res.body.code]).toEqual([400, 13]);
  });
});
