import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { SqliteEventStore } from '@app/event-store';
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
    // The queued job may delete the files before the sweep logs what it queued.
    expect(await worker.outputMatching('sweep: 1 pending purge(s) queued')).toContain('sweep: 1 pending purge(s) queued');
    // The files go first, then TablePurged is recorded.
    expect(await waitFor(() => types(new Api(api2.url), 's%24t'), (t) => t.includes('TablePurged'), 10_000)).toContain('TablePurged');
  }, 120_000);
});

/** `$WAREHOUSE/default`, read off a table's location. */
const databaseRoot = (location: string) => location.slice(0, location.indexOf('/default/') + '/default'.length);

/**
 * A purge deletes everything under a dropped table's location, so no table may be declared where
 * its files would lie inside or around another table's: a namespace's folder, a folder inside a
 * table, a folder holding one, or any of these for a dropped table whose purge is pending.
 */
describe('table locations that nest', () => {
  let server: RunningServer;
  let api: Api;
  let victim: string;
  let root: string;

  beforeAll(async () => {
    server = await startServer({ env: { DROP_RETENTION_SECONDS: '3600' } });
    api = new Api(server.url);
    await api.post('/v1/namespace/alpha/create', {});
    await api.post('/v1/namespace/alpha%24sales/create', {});
    victim = (await api.send<any>('POST', '/v1/table/alpha%24sales%24orders/create', arrowStream(sampleTable(0, 30)), ARROW_STREAM)).body.location;
    root = databaseRoot(victim);
  });
  afterAll(() => server?.stop());

  /** Every route that takes a location, each asked for a new table `alpha$intruder` there. */
  const everyRoute = (location: string, routes = ['declare', 'register', 'create', 'batch-commit']) =>
    Promise.all(
      routes.map(async (route) => {
        const reply =
          route === 'create'
            ? await api.send<any>('POST', '/v1/table/alpha%24intruder/create', arrowStream(sampleTable(0, 2)), { ...ARROW_STREAM, 'x-lance-table-location': location })
            : route === 'batch-commit'
              ? await api.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['alpha', 'intruder'], location } }] })
              : await api.post(`/v1/table/alpha%24intruder/${route}`, { location });
        return { route, reply };
      }),
    );

  const expectRefused = async (location: string, message: RegExp, routes?: string[]) => {
    for (const { route, reply } of await everyRoute(location, routes)) {
      expect({ route, location, status: reply.status, code: reply.body.code }).toEqual({ route, location, status: 400, code: 13 });
      expect(reply.body.error).toMatch(message);
      // The answer names the input only, never the table that is there.
      expect(reply.text.split(JSON.stringify(location).slice(1, -1)).join('')).not.toMatch(/orders|inner|bomb|deep/);
    }
    expect((await api.post('/v1/table/alpha%24intruder/exists', {})).status).toBe(404);
  };

  it("refuses a namespace's folder, a folder inside a table and a folder holding one, on every route that takes a location", async () => {
    for (const folder of [`${root}/alpha/sales`, `${root}/alpha`, `${root}/gamma`, `${root}/alpha/sales/`]) {
      await expectRefused(folder, /is a folder where namespaces keep their tables/);
    }
    await expectRefused(`${victim}/data/sub.lance`, /lies inside another table's location/);
    await expectRefused(`${victim}/_versions/x.lance`, /lies inside another table's location/);
    const inner = await api.send<any>('POST', '/v1/table/alpha%24inner/create', arrowStream(sampleTable(0, 5)), {
      ...ARROW_STREAM,
      'x-lance-table-location': `${root}/alpha/box.lance/inner.lance`,
    });
    expect(inner.status).toBe(200);
    await expectRefused(`${root}/alpha/box.lance`, /holds another table's location/);
    // Segments, not string prefixes: a neighbour whose name starts like the table is its own folder.
    expect((await api.post('/v1/table/alpha%24neighbour/declare', { location: `${victim}2` })).status).toBe(200);
    expect((await api.get('/v1/namespace/alpha%24sales/table/list')).body.tables).toEqual(['orders']);
    expect((await api.post('/v1/table/alpha%24sales%24orders/count_rows', {})).body).toBe(30);
    expect((await api.post('/v1/table/alpha%24inner/count_rows', {})).body).toBe(5);
  });

  it('refuses a location at, inside or around a dropped table awaiting its purge: no time bomb can be set', async () => {
    // Declared at a folder, dropped: while its purge is pending nothing may be declared under it.
    const bomb = `${root}/alpha/bomb.lance`;
    expect((await api.post('/v1/table/alpha%24bomb/declare', { location: bomb })).status).toBe(200);
    expect((await api.post('/v1/table/alpha%24bomb/drop', {})).status).toBe(200);
    await expectRefused(`${bomb}/victim.lance`, /lies inside the location of a dropped table whose files are still to be purged/);
    // Its own location is refused too, except to RegisterTable, which takes the dropped table back.
    await expectRefused(bomb, /still to be purged/, ['declare', 'create', 'batch-commit']);
    // A dropped table inside a folder closes the folder around it.
    const crate = `${root}/alpha/crate.lance`;
    expect((await api.send('POST', '/v1/table/alpha%24deep/create', arrowStream(sampleTable(0, 3)), { ...ARROW_STREAM, 'x-lance-table-location': `${crate}/deep.lance` })).status).toBe(200);
    expect((await api.post('/v1/table/alpha%24deep/drop', {})).status).toBe(200);
    await expectRefused(crate, /holds the location of a dropped table whose files are still to be purged/);
    // And a table with data, dropped: nothing may be declared among its files before they go.
    expect((await api.post('/v1/table/alpha%24sales%24orders/drop', {})).status).toBe(200);
    await expectRefused(`${victim}/data/sub.lance`, /lies inside the location of a dropped table/);
    expect(existsSync(join(victim, '_versions'))).toBe(true);
  });
});

describe('a purge whose location holds or lies inside a live table', () => {
  it('deletes nothing and records the live tables it left alone, for a log written before such locations were refused', async () => {
    const dataDir = tempDataDir();
    const env = { DROP_RETENTION_SECONDS: '0' };
    const first = await startServer({ dataDir, env });
    const api1 = new Api(first.url);
    await api1.post('/v1/namespace/legacy/create', {});
    const outer = (await api1.send<any>('POST', '/v1/table/legacy%24outer/create', arrowStream(sampleTable(0, 40)), ARROW_STREAM)).body.location as string;
    const box = `${databaseRoot(outer)}/legacy/box.lance`;
    const inner = `${box}/inner.lance`;
    expect((await api1.send('POST', '/v1/table/legacy%24inner/create', arrowStream(sampleTable(0, 12)), { ...ARROW_STREAM, 'x-lance-table-location': inner })).status).toBe(200);
    // Both are refused now; an older server recorded them: a table at `outer`'s data folder and
    // one around `inner`, each dropped with its purge due at once.
    expect((await api1.post('/v1/table/legacy%24nested/declare', { location: `${outer}/data` })).status).toBe(400);
    await first.stop();
    const store = new SqliteEventStore(join(dataDir, 'events.sqlite3'));
    const droppedAt = (name: string, location: string) => {
      const ref = { table: ['legacy', name], tableUuid: randomUUID(), location };
      const metadata = (operation: string) => ({ transactionId: randomUUID(), operation, occurredAt: new Date().toISOString() });
      const declare = metadata('DeclareTable');
      const drop = metadata('DropTable');
      return [
        { type: 'TableDeclared', data: { ...ref, properties: {}, managedVersioning: true }, metadata: declare },
        { type: 'TableDropped', data: ref, metadata: drop },
        { type: 'TablePurgeScheduled', data: { ...ref, purgeAfterMillis: Date.now() }, metadata: drop },
      ];
    };
    await store.append('catalog-default', [...droppedAt('nested', `${outer}/data`), ...droppedAt('box', box)], await store.streamRevision('catalog-default'));
    await store.close();

    // The starting worker's sweep queues both pending purges.
    const server = await startServer({ dataDir, env });
    try {
      const api = new Api(server.url);
      const purged = async (name: string) => {
        const events = await waitFor(
          async () => (await api.get(`/v1/history/table/legacy%24${name}`)).body.events as { type: string; data: any }[],
          (e) => e.some((x) => x.type === 'TablePurged'),
          60_000,
        );
        return events.find((e) => e.type === 'TablePurged')!.data;
      };
      expect(await purged('nested')).toMatchObject({ location: `${outer}/data`, files: 0, skipped: [{ table: ['legacy', 'outer'], location: outer }] });
      expect(await purged('box')).toMatchObject({ location: box, files: 0, skipped: [{ table: ['legacy', 'inner'], location: inner }] });
      expect((await api.post('/v1/table/legacy%24outer/count_rows', {})).body).toBe(40);
      expect((await api.post('/v1/table/legacy%24inner/count_rows', {})).body).toBe(12);
      expect(existsSync(join(inner, '_versions'))).toBe(true);
      const kept = /kept the files of dropped table .* live tables lie at, inside or around its location: legacy\.outer at /;
      expect(await server.outputMatching(kept)).toMatch(kept);
      // Purges that touch no live table still delete, on the same server.
      const alone = (await api.send<any>('POST', '/v1/table/legacy%24alone/create', arrowStream(sampleTable(0, 3)), ARROW_STREAM)).body.location as string;
      expect((await api.post('/v1/table/legacy%24alone/drop', {})).status).toBe(200);
      await waitFor(async () => existsSync(alone), (there) => !there, 60_000);
    } finally {
      await server.stop();
    }
  }, 180_000);
});
