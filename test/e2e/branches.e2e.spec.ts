import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

/** ListTableBranches, CreateTableBranch, DeleteTableBranch and `branch` on the operations that take it. */
describe('branches', () => {
  let server: RunningServer;
  let api: Api;
  const T = '/v1/table/br%24t';
  const count = async (body: Record<string, unknown> = {}) => (await api.post(`${T}/count_rows`, body)).body;
  const insert = (from: number, n: number, branch?: string) =>
    api.send<any>('POST', `${T}/insert${branch ? `?branch=${branch}` : ''}`, arrowStream(sampleTable(from, n)), ARROW_STREAM);

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    await api.post('/v1/namespace/br/create', {});
    expect((await api.send('POST', `${T}/create`, arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
    expect((await insert(10, 10)).body.version).toBe(2);
  }, 60_000);
  afterAll(() => server?.stop());

  it('branches from main and from a version; writes on a branch stay there; counts and versions are per branch', async () => {
    const fromMain = await api.post(`${T}/branches/create`, { name: 'dev' });
    expect(fromMain.status).toBe(200);
    expect(fromMain.body.transaction_id).toEqual(expect.any(String));
    const fromVersion = await api.post(`${T}/branches/create`, { name: 'old', from_version: 1 });
    expect(fromVersion.status).toBe(200);

    expect((await insert(100, 5, 'dev')).body).toMatchObject({ num_inserted_rows: 5, version: 3 });
    expect(await count()).toBe(20);
    expect(await count({ branch: 'dev' })).toBe(25);
    expect(await count({ branch: 'old' })).toBe(10);
    expect(await count({ branch: 'main' })).toBe(20);
    expect(await count({ branch: 'dev', version: 2 })).toBe(20);

    const versions = async (branch?: string) =>
      (await api.post(`${T}/version/list${branch ? `?branch=${branch}` : ''}`, null)).body.versions.map((v: { version: number }) => v.version);
    expect(await versions()).toEqual([1, 2]);
    expect(await versions('dev')).toEqual([2, 3]);
    expect(await versions('old')).toEqual([1]);
    const described = await api.post(`${T}/version/describe`, { branch: 'dev' });
    expect(described.body.version).toMatchObject({ version: 3, manifest_path: expect.stringContaining('/tree/dev/_versions/') });
    expect((await api.post(`${T}/describe`, { branch: 'dev' })).body.version).toBe(3);

    // A branch from a branch, and the mutations and reads that take `branch`.
    expect((await api.post(`${T}/branches/create`, { name: 'feature', from_branch: 'dev' })).status).toBe(200);
    const updated = await api.post(`${T}/update`, { branch: 'feature', predicate: 'id >= 100', updates: [['text', "'on feature'"]] });
    expect(updated.body).toMatchObject({ updated_rows: 5 });
    expect((await api.post(`${T}/delete`, { branch: 'feature', predicate: 'id < 5' })).body).toMatchObject({ num_deleted_rows: 5 });
    expect(await count({ branch: 'feature' })).toBe(20);
    expect(await count({ branch: 'feature', predicate: "text = 'on feature'" })).toBe(5);
    expect(await count({ branch: 'dev', predicate: "text = 'on feature'" })).toBe(0);
    const queried = await fetch(`${server.url}${T}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ branch: 'feature', filter: 'id >= 100', k: 100, columns: { column_names: ['id'] } }),
    });
    expect(queried.status).toBe(200);
    const plan = await api.post(`${T}/explain_plan`, { branch: 'feature', query: { filter: 'id >= 100', k: 10 } });
    expect(plan.status).toBe(200);

    const listed = await api.post(`${T}/branches/list`, null);
    expect(listed.body.branches).toEqual({
      dev: { parentVersion: 2, createAt: expect.any(Number), manifestSize: expect.any(Number) },
      feature: { parentBranch: 'dev', parentVersion: 3, createAt: expect.any(Number), manifestSize: expect.any(Number) },
      old: { parentVersion: 1, createAt: expect.any(Number), manifestSize: expect.any(Number) },
    });
    const paged = await api.post(`${T}/branches/list?limit=2`, null);
    expect(Object.keys(paged.body.branches)).toEqual(['dev', 'feature']);
    expect(Object.keys((await api.post(`${T}/branches/list?limit=2&page_token=${paged.body.page_token}`, null)).body.branches)).toEqual(['old']);

    // Tags name the branch their version lives on.
    expect((await api.post(`${T}/tags/create`, { tag: 'dev-3', version: 3, branch: 'dev' })).status).toBe(200);
    expect((await api.post(`${T}/tags/version`, { tag: 'dev-3' })).body).toEqual({ version: 3, branch: 'dev' });
    expect((await api.post(`${T}/tags/list`, {})).body.tags['dev-3']).toMatchObject({ version: 3, branch: 'dev' });
  }, 120_000);

  it('answers 404 code 22 for a missing branch, 409 code 23 for an existing one, and refuses the rest with the spec\'s codes', async () => {
    const refusals = [
      [await api.post(`${T}/count_rows`, { branch: 'nope' }), 404, 22],
      [await insert(0, 1, 'nope'), 404, 22],
      [await api.post(`${T}/version/list?branch=nope`, null), 404, 22],
      [await api.post(`${T}/branches/delete`, { name: 'nope' }), 404, 22],
      [await api.post(`${T}/branches/create`, { name: 'x', from_branch: 'nope' }), 404, 22],
      [await api.post(`${T}/branches/create`, { name: 'dev' }), 409, 23],
      [await api.post(`${T}/branches/create`, { name: 'x', from_version: 99 }), 404, 11],
      [await api.post(`${T}/branches/create`, { name: '../escape' }), 400, 13],
      [await api.post(`${T}/branches/create`, { name: 'main' }), 400, 13],
      [await api.post(`${T}/branches/create`, {}), 400, 13],
      [await api.post(`${T}/branches/delete`, { name: 'dev' }), 409, 19],
      [await api.post(`${T}/create_index`, { column: 'id', index_type: 'BTREE', branch: 'nope' }), 404, 22],
      [await api.post('/v1/table/br%24nowhere/branches/list', null), 404, 4],
    ] as const;
    for (const [res, status, code] of refusals) expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
    expect(refusals[10][0].body.error).toContain('feature');
    const history = (await api.get(`/v1/history/table/br%24t`)).body.events.map((e: { type: string }) => e.type);
    expect(history.filter((t: string) => t === 'TableBranchCreated')).toHaveLength(3);
  });

  it('deletes a branch with its files; the history shows the branch events and replay gives the same digest', async () => {
    const location: string = (await api.post(`${T}/describe`, {})).body.location;
    expect(existsSync(join(location, 'tree', 'feature', '_versions'))).toBe(true);
    expect((await api.post(`${T}/branches/delete`, { name: 'feature' })).status).toBe(200);
    expect((await api.post(`${T}/count_rows`, { branch: 'feature' })).body.code).toBe(22);
    expect(existsSync(join(location, 'tree', 'feature'))).toBe(false);
    expect(existsSync(join(location, '_refs', 'branches', 'feature.json'))).toBe(false);
    expect(existsSync(join(location, '_refs', 'branches', 'dev.json'))).toBe(true);
    expect(Object.keys((await api.post(`${T}/branches/list`, null)).body.branches)).toEqual(['dev', 'old']);
    // A name can be used again once deleted.
    expect((await api.post(`${T}/branches/create`, { name: 'feature', from_version: 1 })).status).toBe(200);
    expect(await count({ branch: 'feature' })).toBe(10);

    const history = (await api.get(`/v1/history/table/br%24t`)).body.events;
    const branchEvents = history.filter((e: { type: string }) => e.type.startsWith('TableBranch')).map((e: { type: string; data: { branch: string } }) => `${e.type} ${e.data.branch}`);
    expect(branchEvents).toEqual([
      'TableBranchCreated dev',
      'TableBranchCreated old',
      'TableBranchCreated feature',
      'TableBranchDeleted feature',
      'TableBranchCreated feature',
    ]);
    const onBranch = history.filter((e: { type: string; data: { branch?: string } }) => e.type === 'TableVersionCreated' && e.data.branch === 'dev');
    expect(onBranch.map((e: { data: { version: number } }) => e.data.version)).toEqual([2, 3]);

    const digest = (await api.get('/v1/history/digest')).body;
    await server.stop();
    const { stdout } = await run(process.execPath, [resolve(ROOT, 'dist/apps/api/src/replay.js')], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: server.dataDir },
    });
    const replayed = JSON.parse(stdout).databases.find((d: { database: string }) => d.database === 'default');
    expect({ digest: replayed.digest, revision: replayed.revision }).toEqual({ digest: digest.digest, revision: digest.revision });
    server = await startServer({ dataDir: server.dataDir });
    api = new Api(server.url);
    expect(await count({ branch: 'dev' })).toBe(25);
  }, 120_000);

  it('builds indexes and backfills computed columns on a branch as followable jobs, leaving main as it was', async () => {
    const settle = (job: string) =>
      waitFor(() => api.post(`/v1/transaction/${job}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000).then((r) => r.body);
    const requested = await api.post(`${T}/create_index`, { column: 'id', index_type: 'BTREE', branch: 'dev' });
    expect(requested.status).toBe(200);
    expect(await settle(requested.body.transaction_id)).toMatchObject({ status: 'Succeeded', properties: { index_name: 'id_idx', branch: 'dev' } });
    const onDev = await api.post(`${T}/index/list`, { branch: 'dev' });
    expect(onDev.body.indexes.map((i: { index_name: string; status: string }) => [i.index_name, i.status])).toEqual([['id_idx', 'ready']]);
    expect((await api.post(`${T}/index/list`, {})).body.indexes).toEqual([]);
    expect((await api.post(`${T}/index/id_idx/stats`, { branch: 'dev' })).body).toMatchObject({ num_indexed_rows: 25 });
    expect((await api.post(`${T}/index/id_idx/stats`, {})).body.code).toBe(6);

    // The catalog's own HNSW graph of a branch lives in the branch's tree and serves its queries.
    const graph = await api.post(`${T}/create_index`, { column: 'vector', index_type: 'HNSW', name: 'graph', branch: 'dev' });
    expect(await settle(graph.body.transaction_id)).toMatchObject({ status: 'Succeeded', properties: { indexed_rows: '25', branch: 'dev' } });
    const nearest = { vector: { single_vector: Array.from(sampleTable(102, 1).getChild('vector')!.get(0)!.toArray() as Float32Array) }, k: 1 };
    const plan = await api.post(`${T}/explain_plan`, { branch: 'dev', query: nearest });
    expect(plan.body).toContain('HnswSearch: index=graph');
    expect(plan.body).toContain('/tree/dev/_hnsw/graph.bin');
    expect((await api.post(`${T}/explain_plan`, { query: nearest })).body).not.toContain('HnswSearch');
    const hit = await fetch(`${server.url}${T}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...nearest, branch: 'dev', columns: { column_names: ['id'] } }),
    });
    expect(arrow.tableFromIPC(new Uint8Array(await hit.arrayBuffer())).getChild('id')!.get(0)).toBe(102);

    expect((await api.post(`${T}/add_columns`, { branch: 'dev', new_columns: [{ name: 'doubled', computed: 'id * 2' }] })).status).toBe(200);
    const backfill = await api.post(`${T}/backfill_column`, { column: 'doubled', branch: 'dev' });
    expect(backfill.status).toBe(202);
    expect(await settle(backfill.body.job_id)).toMatchObject({ status: 'Succeeded', properties: { rows_filled: '25', branch: 'dev' } });
    expect(await count({ branch: 'dev', predicate: 'doubled = id * 2' })).toBe(25);
    expect((await api.post(`${T}/backfill_column`, { column: 'doubled' })).body.code).toBe(12);
    const location: string = (await api.post(`${T}/describe`, {})).body.location;
    expect(readdirSync(join(location, 'tree', 'dev', '_hnsw')).length).toBe(3);
    for (const name of ['id_idx', 'graph']) expect((await api.post(`${T}/index/${name}/drop`, { branch: 'dev' })).status).toBe(200);
    expect((await api.post(`${T}/index/list`, { branch: 'dev' })).body.indexes).toEqual([]);
    expect(readdirSync(join(location, 'tree', 'dev', '_hnsw'))).toEqual([]);
  }, 120_000);

  it('leaves no branch behind when Lance cannot make it', async () => {
    const U = '/v1/table/br%24undo';
    const created = await api.send<any>('POST', `${U}/create`, arrowStream(sampleTable(0, 5)), ARROW_STREAM);
    await api.send('POST', `${U}/insert`, arrowStream(sampleTable(5, 5)), ARROW_STREAM);
    // Version 1 is recorded, but its manifest is gone from disk: Lance has nothing to branch from.
    rmSync(join(created.body.location, '_versions', '18446744073709551614.manifest'));
    const refused = await api.post(`${U}/branches/create`, { name: 'lost', from_version: 1 });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.body.error).toContain('creating the branch failed');
    expect((await api.post(`${U}/branches/list`, null)).body.branches).toEqual({});
    expect(existsSync(join(created.body.location, 'tree', 'lost'))).toBe(false);
    const history = (await api.get(`/v1/history/table/br%24undo`)).body.events.map((e: { type: string }) => e.type);
    // Lance asked for version 1 on the way, and the catalog found its manifest gone and recorded it.
    expect(history.slice(-3)).toEqual(['TableBranchCreated', 'TableVersionsDeleted', 'TableBranchDeleted']);
    expect((await api.post(`${U}/version/list`, {})).body.versions.map((v: { version: number }) => v.version)).toEqual([2]);
    expect((await api.post(`${U}/branches/create`, { name: 'lost' })).status).toBe(200);
  });

  it('lets the lancedb client create, list, open and write branches through the catalog', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    try {
      const table = await db.createTable('client', [{ id: 1 }, { id: 2 }]);
      await table.add([{ id: 3 }]);
      const branches = await table.branches();
      const dev = await branches.create('dev');
      await dev.add([{ id: 4 }]);
      expect([await table.countRows(), await dev.countRows()]).toEqual([3, 4]);
      const child = await branches.create('child', 'dev');
      expect(await child.countRows()).toBe(4);
      const listed = await branches.list();
      expect(Object.keys(listed).sort()).toEqual(['child', 'dev']);
      expect(await (await db.openTable('client', [], { branch: 'dev' })).countRows()).toBe(4);

      // The catalog recorded what the client did, parents included.
      const ours = await api.post('/v1/table/client/branches/list', null);
      expect(ours.body.branches.child).toMatchObject({ parentBranch: 'dev', parentVersion: 3 });
      expect(ours.body.branches.dev).toMatchObject({ parentVersion: 2 });
      expect(ours.body.branches.dev.parentBranch).toBeUndefined();
      expect(await api.post('/v1/table/client/count_rows', { branch: 'dev' }).then((r) => r.body)).toBe(4);
      const versions = await api.post('/v1/table/client/version/list?branch=dev', null);
      expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 3]);

      // Lance's own delete removes the files without a word to the catalog; the catalog finds out
      // when the branch is next looked up, so the name can be made again by the client.
      await branches.delete('child');
      const again = await branches.create('child', 'dev');
      expect(await again.countRows()).toBe(4);
      const history = (await api.get('/v1/history/table/client')).body.events.filter((e: { type: string }) => e.type.startsWith('TableBranch'));
      expect(history.map((e: { type: string; data: { branch: string; reason?: string } }) => [e.type, e.data.branch, !!e.data.reason])).toEqual([
        ['TableBranchCreated', 'dev', false],
        ['TableBranchCreated', 'child', false],
        ['TableBranchDeleted', 'child', true],
        ['TableBranchCreated', 'child', false],
      ]);
    } finally {
      db.close();
    }
  }, 120_000);
  it('lists the branches a client keeps on an unmanaged table from Lance\'s ref files, and refuses to act on them', async () => {
    const unmanaged = await startServer({ env: { MANAGED_VERSIONING: 'false' } });
    const db = await lancedb.connectNamespace('rest', { uri: unmanaged.url });
    try {
      const table = await db.createTable('plain', [{ id: 1 }, { id: 2 }]);
      await (await table.branches()).create('dev');
      const plainApi = new Api(unmanaged.url);
      const listed = await plainApi.post('/v1/table/plain/branches/list', null);
      expect(listed.body.branches).toEqual({ dev: { parentVersion: 1, createAt: expect.any(Number), manifestSize: expect.any(Number) } });
      for (const res of [
        await plainApi.post('/v1/table/plain/branches/create', { name: 'other' }),
        await plainApi.post('/v1/table/plain/branches/delete', { name: 'dev' }),
        await plainApi.post('/v1/table/plain/count_rows', { branch: 'dev' }),
      ]) {
        expect({ status: res.status, code: res.body.code }).toEqual({ status: 406, code: 0 });
      }
    } finally {
      db.close();
      await unmanaged.stop();
    }
  }, 60_000);
});
