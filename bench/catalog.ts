import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SqliteEventStore } from '@app/event-store';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { post, report, startServer, timed } from './support';

/**
 * Catalog benchmarks, each beside its baseline measured in the same run:
 *  1. DescribeTable and ListTables on a catalog of BENCH_TABLES tables, BENCH_CONNECTIONS
 *     connections, against a bare Fastify route answering a fixed JSON object;
 *  2. CreateTableVersion with manifest finalisation, BENCH_WRITERS concurrent writers over 100
 *     tables, against appending the same events to the embedded store directly.
 */
const TABLES = Number(process.env.BENCH_TABLES ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 32);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 3_000);

async function load(url: string, title: string, request: { method: 'GET' | 'POST'; path: (i: number) => string }) {
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: request.method,
        headers: { 'content-type': 'application/json' },
        body: request.method === 'POST' ? '{}' : undefined,
        setupRequest: (req) => ({ ...req, path: request.path(i++) }),
      },
    ],
  });
  if (result.non2xx || result.errors) throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

function startBare(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [resolve(__dirname, 'bare-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok) => {
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening on (\S+)/.exec(String(d));
      if (m) ok({ url: m[1], stop: () => child.kill() });
    });
  });
}

async function reads(): Promise<void> {
  const server = await startServer();
  const bare = await startBare();
  try {
    await post(`${server.url}/v1/namespace/ns/create`, {});
    const populate = await timed(async () => {
      for (let start = 0; start < TABLES; start += 500) {
        const operations = Array.from({ length: Math.min(500, TABLES - start) }, (_, k) => ({ declare_table: { id: ['ns', `t${start + k}`] } }));
        await post(`${server.url}/v1/table/batch-commit`, { operations });
      }
    });
    console.log(`populated ${TABLES} tables in ${(populate.ms / 1000).toFixed(1)} s`);
    const describe = { method: 'POST' as const, path: (i: number) => `/v1/table/ns%24t${(i * 7919) % TABLES}/describe` };
    const list = { method: 'GET' as const, path: (i: number) => `/v1/namespace/ns/table/list?limit=100&page_token=t${(i * 7919) % TABLES}` };
    const bareDescribe = await load(bare.url, 'bare', describe);
    const catalogDescribe = await load(server.url, 'describe', describe);
    const bareList = await load(bare.url, 'bare', list);
    const catalogList = await load(server.url, 'list', list);
    const row = (path: string, r: { rps: number; p50: number; p99: number }, base: { rps: number }) => ({
      path,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'share of bare': (r.rps / base.rps).toFixed(2),
    });
    report(`Catalog reads: ${TABLES} tables, ${CONNECTIONS} connections, ${SECONDS} s each`, [
      row('bare Fastify route (baseline)', bareDescribe, bareDescribe),
      row('DescribeTable (location only)', catalogDescribe, bareDescribe),
      row('bare Fastify route (baseline)', bareList, bareList),
      row('ListTables, 100 per page', catalogList, bareList),
    ]);
  } finally {
    bare.stop();
    await server.stop();
  }
}

async function commits(): Promise<void> {
  const server = await startServer();
  try {
    await post(`${server.url}/v1/namespace/c/create`, {});
    const locations: string[] = [];
    for (let t = 0; t < 100; t++) locations.push((await post(`${server.url}/v1/table/c%24t${t}/declare`, {})).location);
    // Staging manifests are written before the clock starts: only the commit is measured.
    const perTable = Math.ceil(COMMITS / 100);
    for (const [t, location] of locations.entries()) {
      mkdirSync(join(location, '_versions'), { recursive: true });
      for (let v = 1; v <= perTable; v++) writeFileSync(join(location, '_versions', `${v}.manifest-stage`), `table ${t} version ${v}`);
    }
    // Each writer owns the tables t with t % WRITERS == w, so versions never collide.
    const viaApi = await timed(() =>
      Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let v = 1; v <= perTable; v++) {
            for (let t = w; t < 100; t += WRITERS) {
              await post(`${server.url}/v1/table/c%24t${t}/version/create`, { version: v, manifest_path: join(locations[t], '_versions', `${v}.manifest-stage`).slice(1) });
            }
          }
        }),
      ),
    );
    const total = perTable * 100;

    const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
    const store = new SqliteEventStore(join(dir, 'events.sqlite3'));
    let revision = -1;
    // The catalog serialises appends per database (then retries on a conflict); so does the baseline.
    let tail: Promise<unknown> = Promise.resolve();
    const appendInTurn = (event: Parameters<SqliteEventStore['append']>[1][number]) => {
      const next = tail.then(async () => {
        const appended = await store.append('catalog-default', [event], revision === -1 ? 'no_stream' : revision);
        revision = appended.nextExpectedRevision;
      });
      tail = next;
      return next;
    };
    const direct = await timed(() =>
      Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let v = 1; v <= perTable; v++) {
            for (let t = w; t < 100; t += WRITERS) {
              const data = { table: ['c', `t${t}`], tableUuid: 'x', version: v, manifestPath: `${locations[t].slice(1)}/_versions/${v}.manifest`, manifestSize: 20, namingScheme: 'V2', timestampMillis: Date.now() };
              await appendInTurn({ type: 'TableVersionCreated', data, metadata: { transactionId: `${t}-${v}`, operation: 'CreateTableVersion', occurredAt: new Date().toISOString() } });
            }
          }
        }),
      ),
    );
    await store.close();
    report(`Commits: CreateTableVersion, ${WRITERS} writers over 100 tables, ${total} commits`, [
      { path: 'embedded store append, same events (baseline)', ms: direct.ms.toFixed(0), 'commits/s': Math.round(total / (direct.ms / 1000)), ratio: '1.00' },
      { path: 'CreateTableVersion through the API', ms: viaApi.ms.toFixed(0), 'commits/s': Math.round(total / (viaApi.ms / 1000)), ratio: (direct.ms / viaApi.ms).toFixed(2) },
    ]);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'all';
  if (which === 'all' || which === 'reads') await reads();
  if (which === 'all' || which === 'commits') await commits();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
