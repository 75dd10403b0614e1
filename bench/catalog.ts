import { finalManifestName, versionsDirOf } from '@app/catalog';
import { benchEventStore } from './event-stores';
import { Load, Route, Run, commitAll, pooled, run as runOn, stagedTables } from './load';
import { BenchServer, post, report, startBareServer, startServer, timed } from './support';

/**
 * Catalog benchmarks, each beside its baseline measured in the same run:
 *  1. DescribeTable and ListTables on a catalog of BENCH_TABLES tables, BENCH_CONNECTIONS
 *     connections (autocannon), against a bare Fastify route answering a fixed JSON object;
 *  2. CreateTableVersion with manifest finalisation, BENCH_CONNECTIONS concurrent writers
 *     (autocannon) over 100 tables, against appending the same events to the embedded store.
 * BENCH_GROWTH=1 runs reads at 1/100, 1/10 and 1x BENCH_TABLES tables and commits at 1x, 10x and
 * 100x BENCH_COMMITS (so 30 to 3,000 versions per table), and reports the time per operation at
 * each size.
 */
const TABLES = Number(process.env.BENCH_TABLES ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 3_000);
const GROWTH = process.env.BENCH_GROWTH === '1';
const READ_SCALES = GROWTH ? [0.01, 0.1, 1] : [1];
const COMMIT_SCALES = GROWTH ? [1, 10, 100] : [1];

const run = (url: string, pid: number, title: string, request: Route, seconds: number): Promise<Run> => runOn(url, [pid], CONNECTIONS, title, request, seconds);

const HEALTH: Route = { method: 'GET', path: () => '/healthz' };
const WARM_UP_SECONDS = 2;
/** Each row's SECONDS are split into this many turns, the rows taking turns. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

async function declareTables(server: BenchServer, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 500) {
    const operations = Array.from({ length: Math.min(500, to - start) }, (_, k) => ({ declare_table: { id: ['ns', `t${start + k}`] } }));
    await post(`${server.url}/v1/table/batch-commit`, { operations });
  }
}

const row = (path: string, r: Load, base: Load) => ({
  path,
  'req/s': Math.round(r.rps),
  'p50 ms': r.p50,
  'p99 ms': r.p99,
  'share of bare': (r.rps / base.rps).toFixed(2),
  // Autocannon shares the two cores, so req/s flatters whichever side it holds back more; the
  // server's own CPU per request does not depend on that.
  'server CPU µs/req': r.cpuUs.toFixed(1),
  'CPU share of bare': (base.cpuUs / r.cpuUs).toFixed(2),
});

/** The server's settings for the read runs: the defaults, then without access log lines. */
const READ_SETUPS: Array<{ label: string; env: Record<string, string> }> = [
  { label: 'default settings (every request logged)', env: {} },
  { label: 'ACCESS_LOG=off', env: { ACCESS_LOG: 'off' } },
];

async function reads(setup: (typeof READ_SETUPS)[number]): Promise<void> {
  const server = await startServer(setup.env);
  const bare = await startBareServer();
  const growth: Array<Record<string, string | number>> = [];
  try {
    await post(`${server.url}/v1/namespace/ns/create`, {});
    let declared = 0;
    for (const scale of READ_SCALES) {
      const tables = Math.round(TABLES * scale);
      const populate = await timed(() => declareTables(server, declared, tables));
      declared = tables;
      console.log(`catalog holds ${tables} tables (declared in ${(populate.ms / 1000).toFixed(1)} s)`);
      const describe = { method: 'POST' as const, path: (i: number) => `/v1/table/ns%24t${(i * 7919) % tables}/describe` };
      const list = { method: 'GET' as const, path: (i: number) => `/v1/namespace/ns/table/list?limit=100&page_token=t${(i * 7919) % tables}` };
      // Untimed, on every route of both servers: no row is measured while its code is still cold.
      for (const [url, pid, routes] of [[bare.url, bare.pid, [describe, list]], [server.url, server.pid, [describe, list, HEALTH]]] as const) {
        for (const route of routes) await run(url, pid, 'warm-up', route, WARM_UP_SECONDS);
      }
      // The rows take turns, ROUNDS times, so that load from elsewhere on this shared machine falls
      // on each alike; each row is reported over all its rounds.
      const rows = {
        bareDescribe: [bare.url, bare.pid, describe],
        catalogDescribe: [server.url, server.pid, describe],
        bareList: [bare.url, bare.pid, list],
        catalogList: [server.url, server.pid, list],
        // The same HTTP stack (hooks, auth, metrics, log) answering a constant: what the framework costs.
        health: [server.url, server.pid, HEALTH],
      } as const;
      const runs = Object.fromEntries(Object.keys(rows).map((k) => [k, [] as Run[]])) as Record<keyof typeof rows, Run[]>;
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, [url, pid, route]] of Object.entries(rows) as Array<[keyof typeof rows, (typeof rows)[keyof typeof rows]]>) {
          runs[name].push(await run(url, pid, name, route, SECONDS / ROUNDS));
        }
      }
      const [bareDescribe, catalogDescribe, bareList, catalogList, health] = (Object.keys(rows) as Array<keyof typeof rows>).map((k) => pooled(runs[k]));
      report(`Catalog reads: ${tables} tables, ${CONNECTIONS} connections, ${SECONDS} s each in ${ROUNDS} turns, ${setup.label}`, [
        row('bare Fastify route (baseline)', bareDescribe, bareDescribe),
        row('GET /healthz through the same stack', health, bareDescribe),
        row('DescribeTable (location only)', catalogDescribe, bareDescribe),
        row('bare Fastify route (baseline)', bareList, bareList),
        row('ListTables, 100 per page', catalogList, bareList),
      ]);
      growth.push({
        tables,
        'DescribeTable req/s': Math.round(catalogDescribe.rps),
        'DescribeTable µs/req': (1e6 / catalogDescribe.rps).toFixed(1),
        'ListTables req/s': Math.round(catalogList.rps),
        'ListTables µs/req': (1e6 / catalogList.rps).toFixed(1),
        'share of bare (describe, list)': `${(catalogDescribe.rps / bareDescribe.rps).toFixed(2)}, ${(catalogList.rps / bareList.rps).toFixed(2)}`,
      });
    }
    if (GROWTH) report(`Growth: catalog reads at ${READ_SCALES.map((s) => Math.round(TABLES * s)).join(' / ')} tables, ${setup.label}`, growth);
  } finally {
    bare.stop();
    await server.stop();
  }
}

/** Appends the same events the API would, one at a time in turn, as the catalog's writer would without grouping. */
async function directAppends(locations: string[], perTable: number): Promise<number> {
  const target = await benchEventStore('direct');
  const store = target.open();
  let revision = -1;
  const { ms } = await timed(async () => {
    for (let v = 1; v <= perTable; v++) {
      for (const [t, location] of locations.entries()) {
        const data = { table: ['c', `t${t}`], tableUuid: 'x', version: v, manifestPath: versionsDirOf(location) + finalManifestName(v, 'V1'), manifestSize: 20, namingScheme: 'V2', timestampMillis: Date.now() };
        const metadata = { transactionId: `${t}-${v}`, operation: 'CreateTableVersion', occurredAt: new Date().toISOString() };
        const appended = await store.append('catalog-default', [{ type: 'TableVersionCreated', data, metadata }], revision === -1 ? 'no_stream' : revision);
        revision = appended.nextExpectedRevision;
      }
    }
  });
  await store.close();
  await target.drop();
  return ms;
}

async function commits(): Promise<void> {
  const growth: Array<Record<string, string | number>> = [];
  for (const scale of COMMIT_SCALES) {
    const total = Math.round(COMMITS * scale);
    const perTable = Math.ceil(total / 100);
    const eventStore = await benchEventStore('commits');
    const server = await startServer(eventStore.env);
    try {
      // Untimed: 1,000 commits on other tables first, so the timed run does not measure warming up.
      const warm = await stagedTables(server.url, 'warm', 10);
      await commitAll(server.url, CONNECTIONS, 'warm', warm, 10);
      // Staging manifests are written before the clock starts: only the commit is measured.
      const locations = await stagedTables(server.url, 'c', perTable);
      const { ms: apiMs, committed, p99 } = await commitAll(server.url, CONNECTIONS, 'c', locations, perTable);
      const directMs = await directAppends(locations, perTable);
      const directRate = (perTable * 100) / (directMs / 1000);
      const apiRate = committed / (apiMs / 1000);
      report(`Commits: CreateTableVersion, ${CONNECTIONS} concurrent writers over 100 tables, ${committed} commits, ${eventStore.kind} event store`, [
        { path: `${eventStore.kind} store append, same events, one at a time (baseline)`, ms: directMs.toFixed(0), 'commits/s': Math.round(directRate), 'p99 ms': '-', ratio: '1.00' },
        { path: 'CreateTableVersion through the API', ms: apiMs.toFixed(0), 'commits/s': Math.round(apiRate), 'p99 ms': p99, ratio: (apiRate / directRate).toFixed(2) },
      ]);
      growth.push({ commits: committed, 'versions per table': perTable, 'commits/s': Math.round(apiRate), 'µs/commit': (1e6 / apiRate).toFixed(0), 'direct appends/s': Math.round(directRate), ratio: (apiRate / directRate).toFixed(2) });
    } finally {
      await server.stop();
      await eventStore.drop();
    }
  }
  if (GROWTH) report(`Growth: commits at ${COMMIT_SCALES.map((s) => Math.round(COMMITS * s)).join(' / ')} commits over 100 tables`, growth);
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'all';
  if (which === 'all' || which === 'reads') for (const setup of READ_SETUPS) await reads(setup);
  if (which === 'all' || which === 'commits') await commits();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
