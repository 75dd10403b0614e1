import { ChildProcess, spawn } from 'node:child_process';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { freePort } from '../support/nginx';
import { RunningServer, startServer, tempDataDir } from '../support/server';

/** A Redis of the test's own, so it can be stopped and started again; its AOF keeps queued jobs. */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], {
    stdio: 'ignore',
  });
  await waitFor(
    () => new Promise<boolean>((resolve) => {
      const ping = spawn('redis-cli', ['-p', String(port), 'ping']);
      let out = '';
      ping.stdout.on('data', (d) => (out += d));
      ping.on('exit', () => resolve(out.includes('PONG')));
    }),
    (ok) => ok,
    10_000,
  );
  return child;
}

const stopProcess = (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

describe('faults', () => {
  it('keeps the catalog working while Redis is down, answers queue operations 503 code 17, and proceeds when it returns', async () => {
    const port = await freePort();
    const redisDir = tempDataDir('redis-');
    let redis = await startRedis(port, redisDir);
    const env = { REDIS_URL: `redis://127.0.0.1:${port}`, QUEUE_PREFIX: `faults-${port}` };
    const dataDir = tempDataDir();
    const server = await startServer({ entry: 'api', dataDir, env });
    let worker: RunningServer | undefined;
    try {
      const api = new Api(server.url);
      expect((await api.send('POST', '/v1/table/f/create', arrowStream(sampleTable(0, 100)), ARROW_STREAM)).status).toBe(200);
      // Queued while no worker runs: it must survive the outage.
      const queued = await api.post('/v1/table/f/create_scalar_index', { column: 'id', index_type: 'BTREE', name: 'before_outage' });
      expect(queued.status).toBe(200);

      await stopProcess(redis);
      expect((await api.post('/v1/namespace/during/create', {})).status).toBe(200);
      expect((await api.send('POST', '/v1/table/f/insert', arrowStream(sampleTable(100, 10)), ARROW_STREAM)).status).toBe(200);
      expect((await api.post('/v1/table/f/count_rows', {})).body).toBe(110);
      const refused = await api.post('/v1/table/f/create_scalar_index', { column: 'category', index_type: 'BITMAP' });
      expect([refused.status, refused.body.code]).toEqual([503, 17]);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const notReady = await api.get('/readyz');
      expect([notReady.status, notReady.body.code]).toEqual([503, 17]);
      expect((await api.get('/healthz')).status).toBe(200);
      // Nothing was half-recorded for the refused build.
      expect((await api.post('/v1/table/f/index/list', {})).body.indexes.map((i: { index_name: string }) => i.index_name)).toEqual(['before_outage']);

      redis = await startRedis(port, redisDir);
      await waitFor(() => api.get('/readyz'), (r) => r.status === 200, 30_000);
      worker = await startServer({ entry: 'worker', dataDir, env: { ...env, CATALOG_URL: server.url } });
      const after = await api.post('/v1/table/f/create_scalar_index', { column: 'category', index_type: 'BITMAP', name: 'after_outage' });
      expect(after.status).toBe(200);
      for (const tx of [queued.body.transaction_id, after.body.transaction_id]) {
        const done = await waitFor(() => api.post(`/v1/transaction/${tx}/describe`, {}), (r) => ['Succeeded', 'Failed'].includes(r.body.status));
        expect(done.body.status).toBe('Succeeded');
      }
    } finally {
      await worker?.stop();
      await server.stop();
      await stopProcess(redis, 'SIGTERM');
    }
  }, 120_000);

  it('starts without Redis saying in one line how to get one, serves the catalog, and stops on SIGTERM', async () => {
    const server = await startServer({ env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
    try {
      await waitFor(async () => server.output(), (output) => output.includes('Redis does not answer'), 10_000);
      expect((await new Api(server.url).post('/v1/namespace/no_redis/create', {})).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2000));
      const hints = server.output().split('\n').filter((line) => line.includes('Redis does not answer'));
      expect(hints).toEqual([expect.stringContaining('Start one with `redis-server`')]);
      // BullMQ's own printing of every reconnection's error is not there.
      expect(server.output()).not.toMatch(/^Error: connect ECONNREFUSED/m);
    } finally {
      await server.stop();
    }
    expect(server.process.exitCode).toBe(0);
  });

  it('answers 503 code 17 and reports not ready while the event store cannot be reached', async () => {
    const port = await freePort();
    const server = await startServer({ entry: 'api', env: { EVENT_STORE: `esdb://127.0.0.1:${port}?tls=false` } });
    try {
      const api = new Api(server.url);
      for (const res of [await api.post('/v1/namespace/x/create', {}), await api.get('/v1/namespace/%24/list'), await api.post('/v1/table/x%24t/describe', {})]) {
        expect([res.status, res.body.code]).toEqual([503, 17]);
        expect(res.headers.get('retry-after')).toBe('5');
      }
      const ready = await api.get('/readyz');
      expect([ready.status, ready.body.code]).toEqual([503, 17]);
      expect(JSON.parse(ready.body.detail).event_store).toMatch(/unavailable/);
      expect((await api.get('/healthz')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('after kill -9 during batch commits, has every acknowledged batch whole and no other batch in part', async () => {
    const dataDir = tempDataDir();
    let server = await startServer({ entry: 'api', dataDir });
    const api = new Api(server.url);
    expect((await api.post('/v1/namespace/k/create', {})).status).toBe(200);
    const acknowledged: number[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, (_, w) =>
      (async () => {
        for (let i = w; !stop && i < 4000; i += 4) {
          const res = await api
            .post('/v1/table/batch-commit', {
              operations: [{ declare_table: { id: ['k', `a${i}`] } }, { declare_table: { id: ['k', `b${i}`] } }, { declare_table: { id: ['k', `c${i}`] } }],
            })
            .catch(() => undefined);
          if (res?.status === 200) acknowledged.push(i);
        }
      })(),
    );
    await new Promise((r) => setTimeout(r, 600));
    await server.kill9();
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.length).toBeGreaterThan(5);

    server = await startServer({ entry: 'api', dataDir });
    try {
      const tables = new Set<string>();
      let token: string | undefined;
      do {
        const page = await new Api(server.url).get(`/v1/namespace/k/table/list?limit=1000${token ? `&page_token=${token}` : ''}`);
        for (const t of page.body.tables) tables.add(t);
        token = page.body.page_token ?? undefined;
      } while (token);
      for (const i of acknowledged) for (const p of ['a', 'b', 'c']) expect(tables.has(`${p}${i}`)).toBe(true);
      const batches = new Set([...tables].map((t) => Number(t.slice(1))));
      for (const i of batches) expect(['a', 'b', 'c'].map((p) => tables.has(`${p}${i}`))).toEqual([true, true, true]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
