import * as lancedb from '@lancedb/lancedb';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

/** The official client drives the real server process, in both versioning modes. */
describe.each([
  ['managed versioning', true],
  ['unmanaged versioning', false],
])('lancedb client against the catalog (%s)', (_mode, managed) => {
  let server: RunningServer;
  let db: lancedb.Connection;
  let api: Api;

  const rows = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({
      id: from + i,
      text: `row ${from + i}`,
      vector: [Math.sin(from + i), Math.cos(from + i), ((from + i) % 7) / 7, 1],
    }));

  beforeAll(async () => {
    server = await startServer({ env: { MANAGED_VERSIONING: String(managed) } });
    api = new Api(server.url);
    db = await lancedb.connectNamespace('rest', { uri: server.url });
  });

  afterAll(async () => {
    db?.close();
    await server?.stop();
  });

  it('creates a namespace tree and lists it', async () => {
    await db.createNamespace(['shop']);
    await db.createNamespace(['shop', 'eu']);
    await db.createNamespace(['shop', 'us']);
    expect((await db.listNamespaces()).namespaces).toEqual(['shop']);
    expect((await db.listNamespaces(['shop'])).namespaces).toEqual(['eu', 'us']);
  });

  it('creates a table with data, appends, overwrites, counts with a filter and searches', async () => {
    const table = await db.createTable('items', rows(0, 100), ['shop', 'eu']);
    expect(await table.countRows()).toBe(100);
    await table.add(rows(100, 50));
    expect(await table.countRows()).toBe(150);
    expect(await table.countRows('id >= 120')).toBe(30);
    const hits = await table.vectorSearch([Math.sin(42), Math.cos(42), 0, 1]).limit(3).toArray();
    expect(hits).toHaveLength(3);
    expect(hits[0].id).toBe(42);
    const describe = await api.post(`/v1/table/${Api.id(['shop', 'eu', 'items'])}/describe`, {});
    expect(describe.status).toBe(200);
    expect(describe.body.managed_versioning).toBe(managed);
    if (managed) {
      const versions = await api.post(`/v1/table/${Api.id(['shop', 'eu', 'items'])}/version/list?descending=true`, null);
      expect(versions.body.versions[0].version).toBe(await table.version());
      expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    }
    await table.add(rows(1000, 10), { mode: 'overwrite' });
    expect(await table.countRows()).toBe(10);
    table.close();
  });

  it('opens a table at an older version and from a second connection', async () => {
    const other = await lancedb.connectNamespace('rest', { uri: server.url });
    const latest = await other.openTable('items', ['shop', 'eu']);
    expect(await latest.countRows()).toBe(10);
    const version = await latest.version();
    expect(version).toBe(3);
    await latest.checkout(2);
    expect(await latest.countRows()).toBe(150);
    latest.close();
    other.close();
  });

  it('builds client-side indexes and lists them', async () => {
    const table = await db.createTable('indexed', rows(0, 300), ['shop', 'us']);
    await table.createIndex('id', { config: lancedb.Index.btree() });
    await table.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }) });
    const names = (await table.listIndices()).map((i) => i.name).sort();
    expect(names).toEqual(['id_idx', 'vector_idx']);
    const reopened = await (await lancedb.connectNamespace('rest', { uri: server.url })).openTable('indexed', ['shop', 'us']);
    expect((await reopened.listIndices()).length).toBe(2);
    expect(await reopened.countRows('id < 10')).toBe(10);
    reopened.close();
    table.close();
  });

  it('pages table names with startAfter and limit', async () => {
    for (const name of ['a', 'b', 'c', 'd', 'e']) (await db.createTable(name, rows(0, 2), ['shop'])).close();
    expect(await db.tableNames(['shop'])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await db.tableNames(['shop'], { limit: 2 })).toEqual(['a', 'b']);
    expect(await db.tableNames(['shop'], { startAfter: 'b', limit: 2 })).toEqual(['c', 'd']);
    expect(await db.tableNames(['shop'], { startAfter: 'e' })).toEqual([]);
  });

  it('renames a table, keeping its data', async () => {
    await db.renameTable('a', 'a2', { namespacePath: ['shop'] });
    expect(await db.tableNames(['shop'])).toEqual(['a2', 'b', 'c', 'd', 'e']);
    const renamed = await db.openTable('a2', ['shop']);
    expect(await renamed.countRows()).toBe(2);
    renamed.close();
    await expect(db.openTable('a', ['shop'])).rejects.toThrow(/not found/i);
  });

  it('drops a table and re-creates the same name from scratch', async () => {
    await db.dropTable('b', ['shop']);
    expect(await db.tableNames(['shop'])).not.toContain('b');
    const again = await db.createTable('b', rows(500, 7), ['shop']);
    expect(await again.countRows()).toBe(7);
    expect(await again.version()).toBe(1);
    again.close();
  });

  it('refuses to drop a non-empty namespace with Restrict and removes everything with Cascade', async () => {
    await expect(db.dropNamespace(['shop'])).rejects.toThrow(/not empty/i);
    expect(await db.tableNames(['shop'])).toContain('c');
    await db.dropNamespace(['shop'], { behavior: 'cascade' });
    expect((await db.listNamespaces()).namespaces).toEqual([]);
    const all = await api.get('/v1/table');
    expect(all.body.tables).toEqual([]);
  });
});
