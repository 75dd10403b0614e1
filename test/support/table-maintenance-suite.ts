import * as lancedb from '@lancedb/lancedb';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from './arrow-data';
import { Api } from './http';
import { RunningServer } from './server';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);
export const FINAL = ['Succeeded', 'Failed', 'Canceled'];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A server whose planner looks at a table soon after its commits, and whose expiry cuts 1 s below the oldest version kept. */
export const MAINTENANCE_ENV = { MAINTENANCE_PLAN_DELAY_MS: '300', MAINTENANCE_EXPIRY_MARGIN_SECONDS: '1' };

/** The versions of the final manifests among `names` (a `_versions/` listing), in order, under either naming scheme. */
export function manifestVersions(names: string[]): number[] {
  return names
    .filter((f) => /^\d+\.manifest$/.test(f))
    .map((f) => (f.length === 29 ? Number(2n ** 64n - 1n - BigInt(f.slice(0, 20))) : Number(f.split('.')[0])))
    .sort((a, b) => a - b);
}

/** Table maintenance on one warehouse; `manifests` lists the final manifests of a table's line in storage. */
export function maintenanceSuite(
  name: string,
  setUp: () => Promise<{ server: RunningServer; manifests: (location: string, branch?: string) => Promise<number[]>; tearDown?: () => Promise<void> }>,
): void {
  describe(name, () => {
    let server: RunningServer;
    let api: Api;
    let manifests: (location: string, branch?: string) => Promise<number[]>;
    let tearDown: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      ({ server, manifests, tearDown } = await setUp());
      api = new Api(server.url);
      expect((await api.post('/v1/namespace/m/create', {})).status).toBe(200);
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      await tearDown?.();
    });

    const settle = async (transactionId: string) =>
      waitFor(() => api.post(`/v1/transaction/${transactionId}/describe`, {}).then((r) => r.body), (tx) => FINAL.includes(tx.status), 90_000);
    const versions = async (table: string, branch?: string) =>
      (await api.post(`/v1/table/${table}/version/list`, branch ? { branch } : {})).body.versions.map((v: { version: number }) => v.version) as number[];
    const count = async (table: string, body: object = {}) => Number((await api.post(`/v1/table/${table}/count_rows`, body)).text);
    const insert = (table: string, from: number, rows: number) => api.send('POST', `/v1/table/${table}/insert`, arrowStream(sampleTable(from, rows)), ARROW_STREAM);

    it("keeps the catalog in step with the lancedb client's own optimize(): versions listed are the manifests in storage, the others answer 404 code 11", async () => {
      const db = await lancedb.connectNamespace('rest', { uri: server.url });
      const table = await db.createTable('client', [{ id: 0, v: [0.1, 0.2] }], ['m']);
      for (let i = 1; i <= 30; i++) await table.add([{ id: i, v: [i, i] }]);
      const stats = await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true });
      expect(stats.prune.oldVersionsRemoved).toBeGreaterThan(25);
      const location = (await api.post('/v1/table/m%24client/describe', {})).body.location;
      const listed = await versions('m%24client');
      expect(listed).toEqual(await manifests(location));
      for (const route of ['version/describe', 'restore', 'count_rows']) {
        const answer = await api.post(`/v1/table/m%24client/${route}`, { version: 2 });
        expect([route, answer.status, answer.body.code]).toEqual([route, 404, 11]);
        expect(answer.text).not.toMatch(/\.rs:\d+|Caused by/);
      }
      const gone = (await api.get('/v1/history/table/m%24client')).body.events.filter((e: { type: string }) => e.type === 'TableVersionsDeleted');
      expect(gone.length).toBeGreaterThan(0);
      expect(gone[0].data.reason).toContain('removed from storage outside the catalog');
      expect((await table.listVersions()).map((v) => v.version)).toEqual(listed);
      expect(await table.countRows()).toBe(31);
      table.close();
      db.close();
    }, 120_000);

    it('compacts a table after many small appends with no call from the client', async () => {
      expect((await api.send('POST', '/v1/table/m%24planned/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
      for (let i = 1; i <= 20; i++) expect((await insert('m%24planned', i * 10, 10)).status).toBe(200);
      const state = await waitFor(
        () => api.post('/v1/table/m%24planned/maintenance/describe', {}).then((r) => r.body),
        (d) => d.last_job?.status === 'Succeeded' && d.last_job.properties.maintenance === 'compact',
        60_000,
      );
      expect(state.last_job.properties).toMatchObject({ maintenance: 'compact', requested_by: 'planner' });
      // Appends that landed while the compaction ran stay fragments of their own.
      expect(Number(state.last_job.properties.fragments_before)).toBeGreaterThan(16);
      expect(Number(state.last_job.properties.fragments_after)).toBeLessThanOrEqual(3);
      expect(state.latest_version.fragments).toBeLessThanOrEqual(16);
      expect(await count('m%24planned')).toBe(210);
    }, 120_000);

    it('compacts on request while writers append: every row stays, the job records its figures', async () => {
      expect((await api.send('POST', '/v1/table/m%24racing/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
      for (let i = 1; i <= 8; i++) await insert('m%24racing', i * 10, 10);
      const job = await api.post('/v1/table/m%24racing/maintenance/compact', {});
      expect(job.status).toBe(202);
      const again = await api.post('/v1/table/m%24racing/maintenance/compact', {});
      expect([again.status, again.body.code]).toEqual([409, 14]);
      const appends = await Promise.all(Array.from({ length: 8 }, (_, i) => insert('m%24racing', 1000 + i * 10, 10)));
      expect(appends.map((a) => a.status)).toEqual(Array(8).fill(200));
      const tx = await settle(job.body.job_id);
      expect(tx.status).toBe('Succeeded');
      expect(tx.properties).toMatchObject({ maintenance: 'compact', requested_by: 'request' });
      for (const figure of ['fragments_before', 'fragments_after', 'took_ms', 'table_version']) expect(tx.properties[figure]).toMatch(/^\d+$/);
      expect(await count('m%24racing')).toBe(170);
    }, 120_000);

    it('expires versions by the retention, keeping the latest, a tagged version and a branch base; records them under the job', async () => {
      const T = 'm%24aged';
      expect((await api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, 5)), ARROW_STREAM)).status).toBe(200);
      for (let i = 1; i < 5; i++) await insert(T, i * 5, 5);
      // More than the margin apart: the versions before the pause are older than the oldest version
      // kept (6, tagged) by more than the margin, those after it are not.
      await pause(3_000);
      for (let i = 5; i < 15; i++) await insert(T, i * 5, 5);
      expect((await api.post(`/v1/table/${T}/tags/create`, { tag: 'keep', version: 6 })).status).toBe(200);
      expect((await api.post(`/v1/table/${T}/branches/create`, { name: 'b', from_version: 12 })).status).toBe(200);
      const location = (await api.post(`/v1/table/${T}/describe`, {})).body.location;
      const job = await api.post(`/v1/table/${T}/maintenance/expire_versions`, { keep_last: 2 });
      expect(job.status).toBe(202);
      const tx = await settle(job.body.job_id);
      expect(tx.status).toBe('Succeeded');
      const left = await versions(T);
      expect(left.filter((v) => v <= 15)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
      expect(left).toEqual(await manifests(location));
      expect(tx.properties.versions_removed).toBe('5');
      const deleted = (await api.get(`/v1/history/table/${T}`)).body.events.filter((e: { type: string }) => e.type === 'TableVersionsDeleted');
      expect(deleted.map((e: { data: { versions: number[]; transactionId: string; reason: string } }) => [e.data.versions, e.data.transactionId, e.data.reason])).toEqual([
        [[1, 2, 3, 4, 5], job.body.job_id, 'expired by a maintenance job (the retention in force)'],
      ]);
      expect(await count(T, { version: 6 })).toBe(30);
      expect(await count(T, { branch: 'b' })).toBe(60);
      expect((await api.post(`/v1/table/${T}/count_rows`, { version: 3 })).body.code).toBe(11);
      expect(await count(T)).toBe(75);
    }, 120_000);

    it('runs every job kind on a branch: main keeps its versions, manifests and rows, and the versions branches start from stay', async () => {
      const T = 'm%24forked';
      // Rows of every main version, read through a filter so that Lance reads the data files, not the manifest's counts.
      const scanned = (body: object) => count(T, { ...body, predicate: 'id >= 0' });
      const mainState = async () => {
        const listed = await versions(T);
        const rows = await Promise.all(listed.map((version) => scanned({ version })));
        return { listed, rows, manifests: await manifests(location), latest: await scanned({}) };
      };
      const onBranch = async (kind: string, body: object = {}) => {
        const job = await api.post(`/v1/table/${T}/maintenance/${kind}`, { branch: 'b', ...body });
        expect([kind, job.status]).toEqual([kind, 202]);
        return { jobId: job.body.job_id as string, ...(await settle(job.body.job_id)) };
      };
      expect((await api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
      for (let i = 1; i < 4; i++) expect((await insert(T, i * 10, 10)).status).toBe(200);
      const location = (await api.post(`/v1/table/${T}/describe`, {})).body.location;
      // The branch starts from main's version 3; main moves on past it.
      expect((await api.post(`/v1/table/${T}/branches/create`, { name: 'b', from_version: 3 })).status).toBe(200);
      expect((await insert(T, 40, 10)).status).toBe(200);
      const build = await api.post(`/v1/table/${T}/create_index`, { column: 'id', index_type: 'BTREE', name: 'by_id', branch: 'b' });
      expect((await settle(build.body.transaction_id)).status).toBe('Succeeded');
      const branchInsert = (from: number) => api.send('POST', `/v1/table/${T}/insert?branch=b`, arrowStream(sampleTable(from, 10)), ARROW_STREAM);
      for (let i = 0; i < 8; i++) expect((await branchInsert(1000 + i * 10)).status).toBe(200);
      const main = await mainState();
      expect(main.rows).toEqual([10, 20, 30, 40, 50]);
      expect(await scanned({ branch: 'b' })).toBe(110);
      const old = await versions(T, 'b');
      // Older than the versions made from here on by more than the expiry's margin.
      await pause(1_500);

      const compacted = await onBranch('compact');
      expect(compacted).toMatchObject({ status: 'Succeeded', properties: { maintenance: 'compact' } });
      expect(Number(compacted.properties.fragments_before)).toBe(11);
      // Lance keeps fragments an index covers apart from those it does not: two at most.
      expect(Number(compacted.properties.fragments_after)).toBeLessThanOrEqual(2);
      expect((await api.post(`/v1/table/${T}/maintenance/describe`, { branch: 'b' })).body.latest_version.fragments).toBe(Number(compacted.properties.fragments_after));
      expect(await scanned({ branch: 'b' })).toBe(110);

      for (let i = 8; i < 10; i++) expect((await branchInsert(1000 + i * 10)).status).toBe(200);
      const optimized = await onBranch('optimize_indices');
      expect(optimized).toMatchObject({ status: 'Succeeded', properties: { maintenance: 'optimize_indices', unindexed_rows_before: '20', unindexed_rows_after: '0', rows_indexed: '20' } });
      expect(await scanned({ branch: 'b' })).toBe(130);

      // A branch of the branch, from the version the compaction made: expiry on `b` keeps it.
      const base = Number(compacted.properties.table_version);
      expect((await api.post(`/v1/table/${T}/branches/create`, { name: 'c', from_branch: 'b', from_version: base })).status).toBe(200);
      const before = await versions(T, 'b');
      const expired = await onBranch('expire_versions', { keep_last: 1 });
      expect(expired.status).toBe('Succeeded');
      const left = await versions(T, 'b');
      expect(left).toContain(base);
      expect(left).toContain(before[before.length - 1]);
      const deleted = (await api.get(`/v1/history/table/${T}`)).body.events.filter((e: { type: string }) => e.type === 'TableVersionsDeleted');
      expect(deleted.map((e: { data: { branch?: string; transactionId: string } }) => [e.data.branch, e.data.transactionId])).toEqual([['b', expired.jobId]]);
      const gone: number[] = deleted[0].data.versions;
      expect(Number(expired.properties.versions_removed)).toBe(gone.length);
      expect(before.filter((v) => !left.includes(v))).toEqual(gone);
      // What the retention lets go is exactly what the branch had before the pause.
      expect(gone).toEqual(old);
      expect(left).toEqual(await manifests(location, 'b'));
      for (const version of left) expect(await scanned({ branch: 'b', version })).toBeGreaterThanOrEqual(110);
      expect(await scanned({ branch: 'b' })).toBe(130);
      expect(await scanned({ branch: 'c' })).toBe(110);

      // Main: the same versions (3, the one `b` starts from, among them), the same manifests in
      // storage, every version's rows read from its files.
      expect(await mainState()).toEqual(main);
      expect(main.listed).toContain(3);
      const mainJobs = (await api.post(`/v1/table/${T}/maintenance/describe`, {})).body;
      expect(mainJobs.last_job).toBeUndefined();
    }, 120_000);

    it("builds the catalog's HNSW graph again once rows written since its build pass the policy's share, with no call from the client", async () => {
      const T = 'm%24graphed';
      expect((await api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, 100)), ARROW_STREAM)).status).toBe(200);
      const build = await api.post(`/v1/table/${T}/create_index`, { column: 'vector', index_type: 'HNSW', name: 'graph' });
      expect((await settle(build.body.transaction_id)).status).toBe('Succeeded');
      expect((await insert(T, 100, 50)).status).toBe(200);
      const state = await waitFor(
        () => api.post(`/v1/table/${T}/maintenance/describe`, {}).then((r) => r.body),
        (d) => d.last_job?.properties.maintenance === 'optimize_indices' && FINAL.includes(d.last_job.status),
        60_000,
      );
      expect(state.last_job).toMatchObject({ status: 'Succeeded', properties: { requested_by: 'planner', hnsw_rebuilt: 'graph:150' } });
      const probe = Array.from(sampleTable(120, 1).getChild('vector')!.get(0) as Float32Array);
      const plan = (await api.post(`/v1/table/${T}/explain_plan`, { query: { vector: probe, k: 1 } })).body as string;
      expect(plan).toContain('HnswSearch');
      const analyzed = (await api.post(`/v1/table/${T}/analyze_plan`, { vector: probe, k: 1 })).body as string;
      expect(analyzed).toMatch(/graph: 150 rows/);
    }, 120_000);

    it('refuses what does not fit: no retention, a table without data, a bad policy value reported', async () => {
      expect((await api.post('/v1/table/m%24racing/maintenance/expire_versions', {})).body.code).toBe(13);
      expect((await api.post('/v1/table/m%24nothing/declare', {})).status).toBe(200);
      expect((await api.post('/v1/table/m%24nothing/maintenance/compact', {})).body.code).toBe(19);
      expect((await api.post('/v1/table/m%24missing/maintenance/compact', {})).body.code).toBe(4);
      expect((await api.post('/v1/namespace/tuned/create', { properties: { 'maintenance.compact.max_fragments': 'many', 'maintenance.expire.keep_last': '7' } })).status).toBe(200);
      expect((await api.send('POST', '/v1/table/tuned%24t/create', arrowStream(sampleTable(0, 5)), ARROW_STREAM)).status).toBe(200);
      const state = (await api.post('/v1/table/tuned%24t/maintenance/describe', {})).body;
      expect(state.policy).toMatchObject({ compact_max_fragments: 64, expire_keep_last: 7 });
      expect(state.policy_problems).toEqual(["maintenance.compact.max_fragments: 'many' is not a whole number"]);
    });

    it('replays to the same digest', async () => {
      const digest = (await api.get('/v1/history/digest')).body;
      const { stdout } = await run(process.execPath, [resolve(ROOT, 'dist/apps/api/src/replay.js')], { cwd: ROOT, env: { ...process.env, DATA_DIR: server.dataDir } });
      const replayed = JSON.parse(stdout).databases.find((d: { database: string }) => d.database === 'default');
      expect({ digest: replayed.digest, revision: replayed.revision }).toEqual({ digest: digest.digest, revision: digest.revision });
    });
  });
}
