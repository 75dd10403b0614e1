import { startNginx } from '../test/support/nginx';
import { benchEventStore } from './event-stores';
import { Load, Route, Run, commitAll, pooled, run, stagedTables } from './load';
import { BenchServer, post, report, scratchDir, startServer } from './support';

/**
 * Two API replicas behind nginx beside one, sharing only network services: a PostgreSQL event store
 * (BENCH_EVENT_STORE, default the local server's `postgres` database; a fresh database is made and
 * dropped) and a local warehouse both replicas name. The baseline is one replica behind the same
 * nginx, so the balancer's hop is on both sides. Measured: DescribeTable over BENCH_TABLES tables
 * with BENCH_CONNECTIONS connections (the rows take turns), and CreateTableVersion commits from
 * BENCH_CONNECTIONS writers over 100 tables; each with the replicas' CPU per request summed.
 * On a machine of two cores the replicas, nginx and autocannon share those cores: the ratio tells
 * what a second replica buys there, not on machines of their own.
 */
process.env.BENCH_EVENT_STORE ??= 'postgresql://postgres@127.0.0.1:5432/postgres';
const TABLES = Number(process.env.BENCH_TABLES ?? 1_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 3_000);

const row = (path: string, r: Load, base: Load) => ({
  path,
  'req/s': Math.round(r.rps),
  'p50 ms': r.p50,
  'p99 ms': r.p99,
  'ratio to one replica': (r.rps / base.rps).toFixed(2),
  'replicas CPU µs/req': r.cpuUs.toFixed(1),
});

async function startReplicas(env: Record<string, string>): Promise<BenchServer[]> {
  const warehouse = scratchDir('bench-replicas-warehouse-');
  // API processes only: no worker is needed for reads and commits.
  const shared = { ...env, WAREHOUSE: warehouse, ACCESS_LOG: 'off' };
  return [await startServer(shared, 'dist/apps/api/src/main.js'), await startServer(shared, 'dist/apps/api/src/main.js')];
}

async function reads(replicas: BenchServer[]): Promise<void> {
  for (let start = 0; start < TABLES; start += 500) {
    const operations = Array.from({ length: Math.min(500, TABLES - start) }, (_, k) => ({ declare_table: { id: ['ns', `t${start + k}`] } }));
    if (start === 0) await post(`${replicas[0].url}/v1/namespace/ns/create`, {});
    await post(`${replicas[0].url}/v1/table/batch-commit`, { operations });
  }
  const one = await startNginx([replicas[0].url]);
  const two = await startNginx(replicas.map((r) => r.url));
  const pids = replicas.map((r) => r.pid);
  try {
    const describe: Route = { method: 'POST', path: (i) => `/v1/table/ns%24t${(i * 7919) % TABLES}/describe` };
    for (const balancer of [one, two]) await run(balancer.url, pids, CONNECTIONS, 'warm-up', describe, 3);
    const runs: Record<'one' | 'two', Run[]> = { one: [], two: [] };
    for (let round = 0; round < ROUNDS; round++) {
      runs.one.push(await run(one.url, pids, CONNECTIONS, 'one replica', describe, SECONDS / ROUNDS));
      runs.two.push(await run(two.url, pids, CONNECTIONS, 'two replicas', describe, SECONDS / ROUNDS));
    }
    const [single, pair] = [pooled(runs.one), pooled(runs.two)];
    report(`Replicas: DescribeTable over ${TABLES} tables through nginx, ${CONNECTIONS} connections, ${SECONDS} s each in ${ROUNDS} turns, PostgreSQL event store`, [
      row('one replica behind nginx (baseline)', single, single),
      row('two replicas behind nginx', pair, single),
    ]);
  } finally {
    await one.stop();
    await two.stop();
  }
}

async function commits(replicas: BenchServer[]): Promise<void> {
  const perTable = Math.ceil(COMMITS / 100);
  const one = await startNginx([replicas[0].url]);
  const two = await startNginx(replicas.map((r) => r.url));
  try {
    const warm = await stagedTables(replicas[0].url, 'warm', 10);
    await commitAll(two.url, CONNECTIONS, 'warm', warm, 10);
    const rows = [];
    let base: { rate: number } | undefined;
    for (const [label, balancer] of [['one replica behind nginx (baseline)', one], ['two replicas behind nginx', two]] as const) {
      const ns = label.startsWith('one') ? 'c1' : 'c2';
      const locations = await stagedTables(replicas[0].url, ns, perTable);
      const { ms, committed, p99 } = await commitAll(balancer.url, CONNECTIONS, ns, locations, perTable);
      const rate = committed / (ms / 1000);
      base ??= { rate };
      rows.push({ path: label, ms: ms.toFixed(0), 'commits/s': Math.round(rate), 'p99 ms': p99, 'ratio to one replica': (rate / base.rate).toFixed(2) });
    }
    report(`Replicas: CreateTableVersion, ${CONNECTIONS} concurrent writers over 100 tables, ${perTable * 100} commits each, PostgreSQL event store`, rows);
  } finally {
    await one.stop();
    await two.stop();
  }
}

async function main(): Promise<void> {
  const eventStore = await benchEventStore('replicas');
  const replicas = await startReplicas(eventStore.env);
  try {
    const which = process.argv[2] ?? 'all';
    if (which === 'all' || which === 'reads') await reads(replicas);
    if (which === 'all' || which === 'commits') await commits(replicas);
  } finally {
    for (const r of replicas) await r.stop();
    await eventStore.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
