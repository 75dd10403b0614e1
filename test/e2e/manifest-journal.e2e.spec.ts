import { existsSync, readFileSync, truncateSync, unlinkSync } from 'node:fs';
import * as lancedb from '@lancedb/lancedb';
import { Api } from '../support/http';
import { journaledPaths } from '../support/journal';
import { RunningServer, startServer, tempDataDir } from '../support/server';

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting until ${what}`);
}

const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, v: [from + i, 1] }));

/**
 * Journaled manifests: a finalised manifest's bytes are written with its version's event and the
 * file is synced afterwards. What a crash of the machine could lose of the file is put back
 * from the journal before the restarted server answers anything.
 */
describe('manifest journal', () => {
  const servers: RunningServer[] = [];
  const start = async (opts: Parameters<typeof startServer>[0]) => {
    const s = await startServer(opts);
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('puts back manifests a crash lost or damaged, before the restarted server answers', async () => {
    const dataDir = tempDataDir();
    // Nothing is synced and released on its own during this test.
    const env = { MANIFEST_JOURNAL_FLUSH_MS: '60000' };
    const first = await start({ dataDir, env });
    const db = await lancedb.connectNamespace('rest', { uri: first.url });
    await db.createNamespace(['j']);
    const table = await db.createTable('t', rows(0, 10), ['j']);
    await table.add(rows(10, 10));
    await table.add(rows(20, 10));
    table.close();
    const versions = (await new Api(first.url).post('/v1/table/j%24t/version/list', null)).body.versions as Array<{ version: number; manifest_path: string }>;
    const paths = new Map(versions.map((v) => [v.version, `/${v.manifest_path.replace(/^\/+/, '')}`]));
    expect([...paths.keys()].sort()).toEqual([1, 2, 3]);
    expect(journaledPaths(dataDir)).toEqual(expect.arrayContaining([...paths.values()]));
    const original = new Map([...paths].map(([v, p]) => [v, readFileSync(p)]));

    await first.kill9();
    // What a power cut can do to files written without a sync: gone, or empty.
    unlinkSync(paths.get(3)!);
    truncateSync(paths.get(2)!, 0);

    const second = await start({ dataDir, env });
    for (const [v, p] of paths) expect(readFileSync(p).equals(original.get(v)!)).toBe(true);
    expect(journaledPaths(dataDir)).toEqual([]);
    expect(second.output()).toMatch(/recovered journaled manifests: 2 restored, 1 intact, 0 with their table gone/);

    const reopened = await (await lancedb.connectNamespace('rest', { uri: second.url })).openTable('t', ['j']);
    expect(await reopened.countRows()).toBe(30);
    await reopened.checkout(2);
    expect(await reopened.countRows()).toBe(20);
    reopened.close();
  });

  it('with no sync age, syncs journaled manifests and releases them shortly after the commit', async () => {
    const server = await start({ env: { MANIFEST_JOURNAL_FLUSH_MS: '50', MANIFEST_JOURNAL_SYNC_AGE_MS: '0' } });
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    const table = await db.createTable('quick', rows(0, 5));
    await table.add(rows(5, 5));
    table.close();
    await until(() => journaledPaths(server.dataDir).length === 0, 'the journal is empty');
    expect(await (await db.openTable('quick')).countRows()).toBe(10);
  });

  it('keeps manifests journaled until the kernel has had time to write them back, however often it looks', async () => {
    const server = await start({ env: { MANIFEST_JOURNAL_FLUSH_MS: '50' } });
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    (await db.createTable('recent', rows(0, 5))).close();
    const kept = journaledPaths(server.dataDir);
    expect(kept.length).toBeGreaterThan(0);
    // Ten looks later, still younger than the default sync age (40 s).
    await new Promise((r) => setTimeout(r, 500));
    expect(journaledPaths(server.dataDir)).toEqual(kept);
  });

  it('leaves nothing in the journal after a graceful stop', async () => {
    const server = await start({ env: { MANIFEST_JOURNAL_FLUSH_MS: '60000' } });
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    (await db.createTable('graceful', rows(0, 5))).close();
    expect(journaledPaths(server.dataDir).length).toBeGreaterThan(0);
    await server.stop();
    expect(journaledPaths(server.dataDir)).toEqual([]);
  });

  it('with MANIFEST_DURABILITY=fsync syncs each manifest before its event and journals nothing', async () => {
    const server = await start({ env: { MANIFEST_DURABILITY: 'fsync', MANIFEST_JOURNAL_FLUSH_MS: '60000' } });
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    const table = await db.createTable('synced', rows(0, 5));
    await table.add(rows(5, 5));
    table.close();
    expect(journaledPaths(server.dataDir)).toEqual([]);
    const versions = (await new Api(server.url).post('/v1/table/synced/version/list', null)).body.versions as Array<{ manifest_path: string }>;
    expect(versions).toHaveLength(2);
    for (const v of versions) expect(existsSync(`/${v.manifest_path.replace(/^\/+/, '')}`)).toBe(true);
  });
});
