import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const types = async (api: Api, id: string) => (await api.get(`/v1/history/table/${id}`)).body.events.map((e: { type: string }) => e.type);

/** Dropped tables' files are purged by a worker once DROP_RETENTION_SECONDS have passed; their history stays. */
describe('the purge of dropped tables', () => {
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('deletes a dropped table\'s files (data, manifests, indexes, HNSW graph, staging files) at once with a retention of 0, keeping its history', async () => {
    const server = await startServer({ env: { DROP_RETENTION_SECONDS: '0' } });
    servers.push(server);
    const api = new Api(server.url);
    await api.post('/v1/namespace/p/create', {});
    const created = await api.send<any>('POST', '/v1/table/p%24gone/create', arrowStream(sampleTable(0, 300)), ARROW_STREAM);
    const location = created.body.location as string;
    for (const build of [
      { column: 'id', index_type: 'BTREE', name: 'id_idx' },
      { column: 'vector', index_type: 'HNSW', name: 'graph' },
    ]) {
      const tx = (await api.post('/v1/table/p%24gone/create_index', build)).body.transaction_id;
      await waitFor(() => api.post(`/v1/transaction/${tx}/describe`, {}), (r) => r.body.status === 'Succeeded', 60_000);
    }
    writeFileSync(join(location, '_versions', '18446744073709551610.manifest-5f8c2b7e-0a1d-4c3e-9f6b-2d7e8a9c0b1d'), 'a staging manifest never committed');
    expect(readdirSync(join(location, '_hnsw')).length).toBe(3);
    const dropped = await api.post('/v1/table/p%24gone/drop', {});
    expect(dropped.status).toBe(200);
    await waitFor(async () => existsSync(location), (there) => !there, 60_000);
    const history = await waitFor(() => types(api, 'p%24gone'), (t) => t.includes('TablePurged'), 10_000);
    expect(history.slice(-3)).toEqual(['TableDropped', 'TablePurgeScheduled', 'TablePurged']);
    const purged = (await api.get('/v1/history/table/p%24gone')).body.events.find((e: { type: string }) => e.type === 'TablePurged');
    expect(purged.data).toMatchObject({ location, files: expect.any(Number) });
    expect(purged.data.files).toBeGreaterThan(5);
    expect((await api.post('/v1/table/p%24gone/exists', {})).status).toBe(404);
  }, 120_000);

  it('purges the tables a cascading namespace drop drops, and keeps a deregistered table\'s files', async () => {
    const server = servers[0];
    const api = new Api(server.url);
    await api.post('/v1/namespace/casc/create', {});
    await api.post('/v1/namespace/casc%24inner/create', {});
    const a = (await api.send<any>('POST', '/v1/table/casc%24a/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).body.location;
    const b = (await api.send<any>('POST', '/v1/table/casc%24inner%24b/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).body.location;
    const kept = (await api.send<any>('POST', '/v1/table/p%24kept/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).body.location;
    expect((await api.post('/v1/table/p%24kept/deregister', {})).status).toBe(200);
    expect((await api.post('/v1/namespace/casc/drop', { behavior: 'Cascade' })).status).toBe(200);
    await waitFor(async () => [existsSync(a), existsSync(b)], (there) => !there[0] && !there[1], 60_000);
    expect(existsSync(join(kept, '_versions'))).toBe(true);
    expect(await types(api, 'p%24kept')).not.toContain('TablePurgeScheduled');
  }, 120_000);

  it('keeps the files for the retention period; registering the location again brings the table back and cancels the purge', async () => {
    const server = await startServer({ env: { DROP_RETENTION_SECONDS: '3600' } });
    servers.push(server);
    const api = new Api(server.url);
    await api.post('/v1/namespace/r/create', {});
    const location = (await api.send<any>('POST', '/v1/table/r%24t/create', arrowStream(sampleTable(0, 42)), ARROW_STREAM)).body.location;
    expect((await api.post('/v1/table/r%24t/drop', {})).status).toBe(200);
    expect(existsSync(location)).toBe(true);
    // Nothing new may be declared into files that are to be purged.
    const declared = await api.post('/v1/table/r%24other/declare', { location });
    expect({ status: declared.status, code: declared.body.code }).toEqual({ status: 400, code: 13 });
    const back = await api.post('/v1/table/r%24t/register', { location });
    expect(back.status).toBe(200);
    expect((await api.post('/v1/table/r%24t/count_rows', {})).body).toBe(42);
    expect((await types(api, 'r%24t')).slice(-4)).toEqual(['TableDropped', 'TablePurgeScheduled', 'TablePurgeCanceled', 'TableRegistered']);
  }, 120_000);

  it('survives restarts and a Redis that lost its jobs: a starting worker queues every pending purge again', async () => {
    const dataDir = tempDataDir();
    const queuePrefix = `purge-sweep-${process.pid}-${Date.now()}`;
    const env = { DROP_RETENTION_SECONDS: '2', QUEUE_PREFIX: queuePrefix };
    const api1 = await startServer({ dataDir, entry: 'api', env });
    const api = new Api(api1.url);
    await api.post('/v1/namespace/s/create', {});
    const location = (await api.send<any>('POST', '/v1/table/s%24t/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).body.location;
    expect((await api.post('/v1/table/s%24t/drop', {})).status).toBe(200);
    await api1.stop();
    // Redis loses every job of this deployment (as one that keeps nothing on disk does on a restart).
    const redis = new Redis(process.env.REDIS_URL!);
    const keys = await redis.keys(`${queuePrefix}:*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis.del(...keys);
    await redis.quit();
    const api2 = await startServer({ dataDir, entry: 'api', env });
    servers.push(api2);
    const worker = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: api2.url } });
    servers.push(worker);
    await waitFor(async () => existsSync(location), (there) => !there, 60_000);
    expect(worker.output()).toContain('sweep: 1 pending purge(s) queued');
    // The files go first, then TablePurged is recorded.
    expect(await waitFor(() => types(new Api(api2.url), 's%24t'), (t) => t.includes('TablePurged'), 10_000)).toContain('TablePurged');
  }, 120_000);
});
