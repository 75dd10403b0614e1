import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import * as arrow from 'apache-arrow';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ARROW_STREAM, waitFor } from '../support/arrow-data';
import { CLIENT_SCENARIO_PASSED, clientScenario } from '../support/client-process';
import { Api } from '../support/http';
import { RunningBalancer, startNginx } from '../support/nginx';
import { TestDatabase, createTestDatabase } from '../support/postgres';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';

const ADMIN_KEY = 'shared-nothing-admin-key-0123456789';
const BUCKET = 'warehouse';
const finalName = (version: number) => `${((1n << 64n) - 1n - BigInt(version)).toString().padStart(20, '0')}.manifest`;

function vectors(rows: number, dim: number): Buffer {
  const type = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: rows * dim }, () => Math.random());
  const table = new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: rows }, (_, i) => i)),
    vector: arrow.makeVector(arrow.makeData({ type, length: rows, child: arrow.makeData({ type: new arrow.Float32(), length: rows * dim, data: values }) })),
  });
  return Buffer.from(arrow.tableToIPC(table, 'stream'));
}

/**
 * The deployment with nothing shared but network services: two API replicas and two workers, each
 * with a data directory of its own, over one PostgreSQL event store, one Redis and one S3 warehouse
 * (Swift), the APIs behind nginx. Replicas are killed with SIGKILL mid-commit and mid-build.
 */
/** `work`, or a failure naming what `explain` says once `ms` have passed without it settling. */
function withinOrExplain<T>(work: Promise<T>, ms: number, explain: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`no answer within ${ms} ms\n${explain()}`)), ms);
  });
  return Promise.race([work, stalled]).finally(() => clearTimeout(timer));
}

describe('a shared-nothing cluster: PostgreSQL, Redis and S3 only', () => {
  let swift: SwiftServer;
  let database: TestDatabase;
  let lb: RunningBalancer;
  let apis: RunningServer[] = [];
  let workers: RunningServer[] = [];
  let env: Record<string, string>;
  let api: Api;

  const startApi = () => startServer({ entry: 'api', dataDir: tempDataDir('node-'), env });
  const startWorker = () => startServer({ entry: 'worker', dataDir: tempDataDir('node-'), env: { ...env, CATALOG_URL: lb.url } });
  const direct = () => apis.map((a) => new Api(a.url, { 'x-api-key': ADMIN_KEY }));
  const describe_ = (tx: string) => api.post(`/v1/transaction/${tx}/describe`, {});

  beforeAll(async () => {
    // Whatever started is stopped by afterAll, even when the other failed.
    const [started, created] = await Promise.allSettled([startSwift(), createTestDatabase('cluster')]);
    if (started.status === 'fulfilled') swift = started.value;
    if (created.status === 'fulfilled') database = created.value;
    for (const r of [started, created]) if (r.status === 'rejected') throw r.reason;
    await swift.createBucket(BUCKET);
    env = {
      ...swift.awsEnv(),
      WAREHOUSE: `s3://${BUCKET}/lance`,
      CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()),
      EVENT_STORE: database.url,
      AUTH_API_KEYS: JSON.stringify([{ principal: 'ops', sha256: createHash('sha256').update(ADMIN_KEY).digest('hex'), databases: ['*'], level: 'admin' }]),
      AUTH_SERVICE_KEY: randomBytes(32).toString('hex'),
      QUEUE_PREFIX: `shared-nothing-${process.pid}-${Date.now()}`,
      JOB_LOCK_MS: '2000',
    };
    apis = await Promise.all([startApi(), startApi()]);
    lb = await startNginx(apis.map((a) => a.url));
    workers = await Promise.all([startWorker(), startWorker()]);
    api = new Api(lb.url, { 'x-api-key': ADMIN_KEY });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill9()));
    await lb?.stop();
    await Promise.all(apis.map((a) => a.stop()));
    await swift?.stop();
    await database?.drop();
  });

  it('reads through one replica at once what was written through the other', async () => {
    const [a, b] = direct();
    for (let i = 0; i < 20; i++) {
      expect((await a.post(`/v1/namespace/seen${i}/create`, {})).status).toBe(200);
      expect((await b.post(`/v1/namespace/seen${i}/exists`, {})).status).toBe(200);
      expect((await b.post(`/v1/table/seen${i}%24t/declare`, {})).status).toBe(200);
      expect((await a.post(`/v1/table/seen${i}%24t/describe`, {})).status).toBe(200);
    }
  });

  it('runs the lancedb client through the balancer, from a process that knows only the catalog', async () => {
    expect(await clientScenario(lb.url, ADMIN_KEY, 'client')).toEqual(CLIENT_SCENARIO_PASSED);
    const [a, b] = direct();
    expect((await b.get('/v1/history/digest')).body).toEqual((await a.get('/v1/history/digest')).body);
  });

  it('loses no acknowledged commit when a replica is killed mid-commit, and racing versions keep exactly one winner', async () => {
    const s3 = swift.client();
    const tables = ['r0', 'r1', 'r2', 'r3'];
    const trace: string[] = [];
    const keys: Record<string, string> = {};
    expect((await api.post('/v1/namespace/racing/create', {})).status).toBe(200);
    for (const t of tables) {
      const declared = await api.post(`/v1/table/racing%24${t}/declare`, {});
      keys[t] = (declared.body.location as string).slice(`s3://${BUCKET}/`.length);
    }
    const acknowledged: Array<{ table: string; version: number; bytes: Buffer }> = [];
    const conflicts: string[] = [];
    // When each version that no commit won was first tried.
    const unwon: Record<string, number> = {};
    let killed = false;
    const victim = apis[0];
    const racers = direct();
    const commits = tables.map(async (t) => {
      for (let version = 1; version <= 15; version++) {
        // Two writers race for each version, one through each replica.
        const contents = [randomBytes(300), randomBytes(300)];
        const stagings = contents.map(() => `${keys[t]}/_versions/${finalName(version)}-${randomUUID()}`);
        await Promise.all(stagings.map((Key, i) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: contents[i] }))));
        const answers = await Promise.all(
          racers.map((r, i) =>
            r.post(`/v1/table/racing%24${t}/version/create`, { version, manifest_path: stagings[i], naming_scheme: 'V2' }).catch(() => ({ status: 0, body: {} })),
          ),
        );
        trace.push(`${t} v${version}: ${answers.map((a) => a.status).join('/')}`);
        const won = answers.map((a, i) => [a.status, i] as const).filter(([status]) => status === 200);
        if (won.length > 1) conflicts.push(`${t} v${version}: ${won.length} winners`);
        else if (won.length === 1) acknowledged.push({ table: t, version, bytes: contents[won[0][1]] });
        else {
          // No acknowledged winner happens only when the killed replica held the winning request.
          if (!killed) conflicts.push(`${t} v${version}: no winner (${answers.map((a) => a.status).join('/')})`);
          // A version the killed replica recorded without copying its manifest is served, made, by the survivor.
          const round = `${t} v${version}`;
          unwon[round] ??= Date.now();
          if (Date.now() - unwon[round] > 20_000) throw new Error(`${round}: no commit has won it for 20 s; last rounds:\n${trace.slice(-12).join('\n')}`);
          // Whether it committed before dying, the catalog says; the next version follows that.
          const listed = await racers[1].post(`/v1/table/racing%24${t}/version/list`, {});
          version = listed.body.versions?.[listed.body.versions.length - 1]?.version ?? 0;
        }
        if (t === tables[0] && version === 6 && !killed) {
          killed = true;
          void victim.kill9();
        }
      }
    });
    await withinOrExplain(Promise.all(commits), 150_000, () =>
      [`last rounds:\n${trace.slice(-12).join('\n')}`, ...apis.map((a, i) => `api ${i}:\n${a.output().slice(-3000)}`)].join('\n'),
    );
    expect(killed).toBe(true);
    expect(conflicts).toEqual([]);
    // Every acknowledged commit is there, with the winner's manifest, read through the survivor.
    const survivor = racers[1];
    for (const t of tables) {
      const listed = (await survivor.post(`/v1/table/racing%24${t}/version/list`, {})).body.versions.map((v: { version: number }) => v.version);
      for (const ack of acknowledged.filter((a) => a.table === t)) {
        expect({ table: t, version: ack.version, listed: listed.includes(ack.version) }).toEqual({ table: t, version: ack.version, listed: true });
        const stored = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: `${keys[t]}/_versions/${finalName(ack.version)}` }));
        expect(Buffer.from(await stored.Body!.transformToByteArray()).equals(ack.bytes)).toBe(true);
      }
    }
    // The killed replica comes back with an empty data directory and answers the same.
    apis[0] = await startApi();
    expect((await new Api(apis[0].url, { 'x-api-key': ADMIN_KEY }).get('/v1/history/digest')).body).toEqual((await survivor.get('/v1/history/digest')).body);
  }, 180_000);

  it('hands a build whose worker was killed to the other worker, and the transaction ends Succeeded', async () => {
    expect((await api.send('POST', '/v1/table/client%24big/create', vectors(20_000, 64), ARROW_STREAM)).status).toBe(200);
    const requested = await api.post('/v1/table/client%24big/create_index', { column: 'vector', index_type: 'HNSW', name: 'graph', m: 16, ef_construction: 200 });
    const tx = requested.body.transaction_id as string;
    await waitFor(() => describe_(tx), (r) => r.body.status === 'Running', 60_000);
    const holder = await waitFor(
      async () => workers.findIndex((w) => w.output().includes(`(transaction ${tx}, attempt`)),
      (i) => i >= 0,
      10_000,
    );
    await workers[holder].kill9();
    const final = await waitFor(() => describe_(tx), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 150_000);
    expect(final.body.status).toBe('Succeeded');
    // The other worker took the job over once the killed one's lock lapsed, and started it again.
    const started = `index build started: HNSW 'graph' (transaction ${tx}`;
    expect(await workers[1 - holder].outputMatching(started)).toContain(started);
    const starts = (await api.get(`/v1/history/transaction/${tx}`)).body.events.filter((e: any) => e.data.setProperties?.started_at);
    expect(starts.length).toBeGreaterThanOrEqual(2);
    const listed = await api.post('/v1/table/client%24big/index/list', {});
    expect(listed.body.indexes).toEqual([expect.objectContaining({ index_name: 'graph', status: 'ready' })]);
    workers[holder] = await startWorker();
  }, 200_000);
});
