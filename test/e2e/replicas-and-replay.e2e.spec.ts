import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import * as lancedb from '@lancedb/lancedb';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');

/** Every list and describe answer of a database, to compare before and after a restart. */
async function snapshot(api: Api) {
  const answers: Record<string, unknown> = {};
  const walk = async (ns: string[]) => {
    const id = Api.id(ns);
    answers[`ns:${id}`] = (await api.post(`/v1/namespace/${id}/describe`, {})).body;
    answers[`tables:${id}`] = (await api.get(`/v1/namespace/${id}/table/list`)).body;
    for (const table of (answers[`tables:${id}`] as { tables: string[] }).tables) {
      const tid = Api.id([...ns, table]);
      const describe = (await api.post(`/v1/table/${tid}/describe?check_declared=true`, {})).body;
      const versions = (await api.post(`/v1/table/${tid}/version/list`, null)).body;
      answers[`table:${tid}`] = { describe, versions };
    }
    const children = (await api.get(`/v1/namespace/${id}/list`)).body.namespaces as string[];
    answers[`children:${id}`] = children;
    for (const child of children) await walk([...ns, child]);
  };
  await walk([]);
  answers.all = (await api.get('/v1/table')).body;
  return answers;
}

describe('replicas, restarts and replay', () => {
  const dataDir = tempDataDir();
  let a: RunningServer;
  let b: RunningServer;

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('two API processes sharing the embedded store see each other’s writes on the next request', async () => {
    a = await startServer({ dataDir, entry: 'api' });
    b = await startServer({ dataDir, entry: 'api' });
    const apiA = new Api(a.url);
    const apiB = new Api(b.url);
    for (let i = 0; i < 20; i++) {
      const [writer, reader] = i % 2 ? [apiA, apiB] : [apiB, apiA];
      expect((await writer.post(`/v1/namespace/ns${i}/create`, {})).status).toBe(200);
      expect((await reader.post(`/v1/namespace/ns${i}/exists`, {})).status).toBe(200);
      const declared = await writer.post(`/v1/table/ns${i}%24t/declare`, {});
      const seen = await reader.post(`/v1/table/ns${i}%24t/describe`, {});
      expect(seen.body.location).toBe(declared.body.location);
    }

    // The official client commits through one replica and reads through the other.
    const dbA = await lancedb.connectNamespace('rest', { uri: a.url });
    const dbB = await lancedb.connectNamespace('rest', { uri: b.url });
    const table = await dbA.createTable('shared', [{ id: 1, v: [1, 2] }], ['ns0']);
    await table.add([{ id: 2, v: [3, 4] }]);
    const other = await dbB.openTable('shared', ['ns0']);
    expect(await other.countRows()).toBe(2);
    expect(await other.version()).toBe(2);
    table.close();
    other.close();
    dbA.close();
    dbB.close();
  });

  it('exactly one of two replicas wins a race for the same version', async () => {
    const apiA = new Api(a.url);
    const apiB = new Api(b.url);
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all([
        apiA.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['ns1', `race${round}`] } }] }),
        apiB.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['ns1', `race${round}`] } }] }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    }
  });

  it('answers the same after a restart, and replay rebuilds the same state from the log', async () => {
    const before = await snapshot(new Api(a.url));
    const digestBefore = (await new Api(a.url).get('/v1/history/digest')).body;
    await a.stop();
    await b.stop();

    const replay = await run(process.execPath, [resolve(ROOT, 'dist/apps/api/src/replay.js')], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir },
    });
    const report = JSON.parse(replay.stdout);
    const replayed = report.databases.find((d: { database: string }) => d.database === 'default');
    expect(replayed.digest).toBe(digestBefore.digest);
    expect(replayed.revision).toBe(digestBefore.revision);
    expect(replayed.tables).toBe((before.all as { tables: string[] }).tables.length);
    expect(report.events).toBe(digestBefore.revision + 1);

    a = await startServer({ dataDir, entry: 'api' });
    const after = await snapshot(new Api(a.url));
    expect(after).toEqual(before);
    expect((await new Api(a.url).get('/v1/history/digest')).body.digest).toBe(digestBefore.digest);
  });

  it('keeps every acknowledged write across kill -9', async () => {
    const api = new Api(a.url);
    const acknowledged: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop && i < 2000; i++) {
        const res = await api.post(`/v1/namespace/k${i}/create`, {}).catch(() => undefined);
        if (res?.status === 200) acknowledged.push(`k${i}`);
      }
    })();
    await new Promise((r) => setTimeout(r, 400));
    await a.kill9();
    stop = true;
    await writer;
    expect(acknowledged.length).toBeGreaterThan(5);
    a = await startServer({ dataDir, entry: 'api' });
    const names = (await new Api(a.url).get('/v1/namespace/%24/list')).body.namespaces as string[];
    for (const name of acknowledged) expect(names).toContain(name);
  });
});
