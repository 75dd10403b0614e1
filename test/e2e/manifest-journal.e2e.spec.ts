import { existsSync, readFileSync, truncateSync, unlinkSync } from 'node:fs';
import * as lancedb from '@lancedb/lancedb';
import { waitFor } from '../support/arrow-data';
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

  it("puts back no manifest of a version recorded deleted (by an expiry, or found gone after the client's own cleanup) after a crash", async () => {
    const dataDir = tempDataDir();
    // Nothing synced and released on its own, no maintenance but the one asked for, an expiry cut 1 s below the oldest version kept.
    const env = { MANIFEST_JOURNAL_FLUSH_MS: '60000', MAINTENANCE_PLAN_DELAY_MS: '3600000', MAINTENANCE_PLAN_MAX_DELAY_MS: '3600000', MAINTENANCE_EXPIRY_MARGIN_SECONDS: '1' };
    const first = await start({ dataDir, env });
    const api = new Api(first.url);
    const db = await lancedb.connectNamespace('rest', { uri: first.url });
    await db.createNamespace(['x']);
    const listed = async (name: string, on = api) =>
      new Map(((await on.post(`/v1/table/x%24${name}/version/list`, null)).body.versions as Array<{ version: number; manifest_path: string }>).map((v) => [v.version, `/${v.manifest_path.replace(/^\/+/, '')}`]));
    const manifestsOnDisk = (paths: Map<number, string>) => [...paths].filter(([, p]) => existsSync(p)).map(([v]) => v);

    // An expiry by a maintenance job.
    const expired = await db.createTable('expired', rows(0, 5), ['x']);
    for (let i = 1; i < 5; i++) await expired.add(rows(i * 5, 5));
    await new Promise((r) => setTimeout(r, 2_500));
    for (let i = 5; i < 7; i++) await expired.add(rows(i * 5, 5));
    const before = await listed('expired');
    const job = await api.post('/v1/table/x%24expired/maintenance/expire_versions', { keep_last: 2 });
    expect(job.status).toBe(202);
    const ended = await waitFor(() => api.post(`/v1/transaction/${job.body.job_id}/describe`, {}).then((r) => r.body), (tx) => ['Succeeded', 'Failed'].includes(tx.status));
    expect(ended.status).toBe('Succeeded');
    const kept = await listed('expired');
    const gone = [...before.keys()].filter((v) => !kept.has(v));
    expect(gone).toEqual([1, 2, 3, 4, 5]);

    // The client's own cleanup, found when the catalog next lists every version.
    const cleaned = await db.createTable('cleaned', rows(0, 5), ['x']);
    for (let i = 1; i < 6; i++) await cleaned.add(rows(i * 5, 5));
    const cleanedBefore = await listed('cleaned');
    await cleaned.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true });
    cleaned.close();
    expired.close();
    const cleanedKept = await listed('cleaned');
    const cleanedGone = [...cleanedBefore.keys()].filter((v) => !cleanedKept.has(v));
    expect(cleanedGone.length).toBeGreaterThan(3);

    // Each manifest still on disk is a version the catalog lists, and none removed is still journaled.
    const removed = [...gone.map((v) => before.get(v)!), ...cleanedGone.map((v) => cleanedBefore.get(v)!)];
    expect(manifestsOnDisk(before)).toEqual([...kept.keys()].filter((v) => before.has(v)));
    expect(journaledPaths(dataDir).filter((p) => removed.includes(p))).toEqual([]);

    await first.kill9();
    const second = await start({ dataDir, env });
    expect(removed.filter((p) => existsSync(p))).toEqual([]);
    expect(manifestsOnDisk(cleanedBefore)).toEqual([...cleanedKept.keys()].filter((v) => cleanedBefore.has(v)));
    expect([...(await listed('expired', new Api(second.url))).keys()]).toEqual([...kept.keys()]);
    const reopened = await (await lancedb.connectNamespace('rest', { uri: second.url })).openTable('expired', ['x']);
    expect(await reopened.countRows()).toBe(35);
    reopened.close();
  }, 120_000);

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
