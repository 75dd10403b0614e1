import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { RunningBalancer, startNginx } from '../support/nginx';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const ADMIN_KEY = 'cluster-admin-key-0123456789';

/** Runs `count` tasks with at most `width` in flight. */
async function concurrently<T>(count: number, width: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

describe('2 API replicas and 2 workers behind nginx', () => {
  const dataDir = tempDataDir();
  const env = {
    AUTH_API_KEYS: JSON.stringify([{ principal: 'ops', sha256: createHash('sha256').update(ADMIN_KEY).digest('hex'), databases: ['*'], level: 'admin' }]),
    AUTH_SERVICE_KEY: randomBytes(32).toString('hex'),
    QUEUE_PREFIX: `cluster-${process.pid}-${Date.now()}`,
  };
  let apis: RunningServer[] = [];
  let workers: RunningServer[] = [];
  let lb: RunningBalancer;
  let api: Api;

  beforeAll(async () => {
    apis = await Promise.all([0, 1].map(() => startServer({ dataDir, entry: 'api', env })));
    lb = await startNginx(apis.map((a) => a.url));
    workers = await Promise.all([0, 1].map(() => startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: lb.url } })));
    api = new Api(lb.url, { 'x-api-key': ADMIN_KEY });
    expect((await api.post('/v1/namespace/lb/create', {})).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await lb?.stop();
    await Promise.all(apis.map((a) => a.stop()));
  });

  it('shows every acknowledged write on the next read, from whichever replica answers', async () => {
    const direct = apis.map((a) => new Api(a.url, { 'x-api-key': ADMIN_KEY }));
    const misses: string[] = [];
    const ops = await concurrently(240, 16, async (i) => {
      const name = `w${i}`;
      const created = await api.post(`/v1/table/lb%24${name}/declare`, {});
      expect(created.status).toBe(200);
      for (const reader of [api, ...direct]) {
        const seen = await reader.post(`/v1/table/lb%24${name}/describe`, {});
        if (seen.status !== 200 || seen.body.location !== created.body.location) misses.push(`${name}: ${seen.status}`);
      }
      return 1 + 1 + direct.length;
    });
    expect(misses).toEqual([]);
    expect(ops.reduce((a, b) => a + b, 0)).toBe(240 * 4);
    // The balancer spread the writes over both replicas.
    for (const a of direct) {
      const metrics = (await a.get('/metrics')).text;
      const m = /lance_catalog_http_requests_total\{operation="\/v1\/table\/:id\/declare",method="POST",status="200"\} (\d+)/.exec(metrics);
      expect(Number(m?.[1] ?? 0)).toBeGreaterThan(20);
    }
  });

  it('gives racing CreateTableVersion calls on one version exactly one winner', async () => {
    for (let round = 0; round < 10; round++) {
      const declared = await api.post(`/v1/table/lb%24v${round}/declare`, {});
      const location: string = declared.body.location;
      mkdirSync(join(location, '_versions'), { recursive: true });
      const racers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => {
          const staged = join(location, '_versions', `1.manifest-racer${i}`);
          writeFileSync(staged, `racer ${i}`);
          return api.post(`/v1/table/lb%24v${round}/version/create`, { version: 1, manifest_path: staged.slice(1) });
        }),
      );
      expect(racers.filter((r) => r.status === 200)).toHaveLength(1);
      expect(racers.filter((r) => r.status === 409 && r.body.code === 14)).toHaveLength(7);
      const listed = await api.post(`/v1/table/lb%24v${round}/version/list`, null);
      expect(listed.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    }
  });

  it('never applies racing batch commits partly', async () => {
    for (let round = 0; round < 10; round++) {
      const shared = `b${round}`;
      const declared = await api.post(`/v1/table/lb%24${shared}/declare`, {});
      const location: string = declared.body.location;
      mkdirSync(join(location, '_versions'), { recursive: true });
      const batch = (side: string) => {
        const staged = join(location, '_versions', `1.manifest-${side}`);
        writeFileSync(staged, side);
        return api.post('/v1/table/batch-commit', {
          operations: [
            { declare_table: { id: ['lb', `${shared}_${side}`] } },
            { create_table_version: { id: ['lb', shared], version: 1, manifest_path: staged.slice(1) } },
          ],
        });
      };
      const results = await Promise.all(['x', 'y', 'z'].map(batch));
      const winners = results.map((r, i) => (r.status === 200 ? ['x', 'y', 'z'][i] : undefined)).filter(Boolean);
      expect(winners).toHaveLength(1);
      for (const side of ['x', 'y', 'z']) {
        const exists = await api.post(`/v1/table/lb%24${shared}_${side}/exists`, {});
        expect(exists.status).toBe(side === winners[0] ? 200 : 404);
      }
    }
  });

  it('has index builds, requested through any replica, run by the workers', async () => {
    const tables = ['i0', 'i1', 'i2', 'i3'];
    for (const t of tables) {
      expect((await api.send('POST', `/v1/table/lb%24${t}/create`, arrowStream(sampleTable(0, 300)), ARROW_STREAM)).status).toBe(200);
    }
    const requested = await Promise.all(tables.map((t) => api.post(`/v1/table/lb%24${t}/create_scalar_index`, { column: 'id', index_type: 'BTREE' })));
    for (const r of requested) expect(r.status).toBe(200);
    for (const r of requested) {
      const done = await waitFor(
        () => api.post(`/v1/transaction/${r.body.transaction_id}/describe`, {}),
        (res) => ['Succeeded', 'Failed'].includes(res.body.status),
      );
      expect(done.body.status).toBe('Succeeded');
    }
    const built = workers.map((w) => (w.output().match(/"msg":"index build succeeded/g) ?? []).length);
    expect(built.reduce((a, b) => a + b, 0)).toBe(tables.length);
  });
});
