import { createHash } from 'node:crypto';
import { Route, Run, pooled, run as runOn } from './load';
import { median, report, startBareServer, startServer, timed } from './support';

/**
 * Catalog reads judged by grants: a catalog of BENCH_GRANT_TABLES tables (100 namespaces) and
 * BENCH_GRANTS grants (one per table to principals of their own, at table depth, and to roles on
 * namespaces), read by a principal whose key holds no level of its own and whose role holds write
 * on one namespace, against the same reads by an admin key and against a bare Fastify route, all
 * measured in turns in the same run.
 */
const TABLES = Number(process.env.BENCH_GRANT_TABLES ?? 100_000);
const GRANTS = Number(process.env.BENCH_GRANTS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
// Turns of one second: on a shared virtual machine the speed of both cores drifts within seconds,
// and rows measured in longer turns drew ratios from 0.49 to 0.80 from one run to the next.
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const NAMESPACES = 100;
const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');
const ROOT_KEY = 'bench-root-key-0123456789';
const ANA_KEY = 'bench-ana-key-0123456789';

async function send(url: string, key: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function main(): Promise<void> {
  const server = await startServer({
    AUTH_API_KEYS: JSON.stringify([
      { principal: 'root', sha256: sha256(ROOT_KEY), databases: ['*'], level: 'admin' },
      { principal: 'ana', sha256: sha256(ANA_KEY), databases: ['default'], level: 'none', roles: ['ml'] },
    ]),
    RATE_LIMIT_MAX: '0',
  });
  const bare = await startBareServer();
  const perNamespace = Math.ceil(TABLES / NAMESPACES);
  try {
    const populate = await timed(async () => {
      for (let n = 0; n < NAMESPACES; n++) await send(`${server.url}/v1/namespace/ns${n}/create`, ROOT_KEY, {});
      for (let start = 0; start < TABLES; start += 500) {
        const operations = Array.from({ length: Math.min(500, TABLES - start) }, (_, k) => {
          const i = start + k;
          return { declare_table: { id: [`ns${i % NAMESPACES}`, `t${Math.floor(i / NAMESPACES)}`] } };
        });
        await send(`${server.url}/v1/table/batch-commit`, ROOT_KEY, { operations });
      }
    });
    console.log(`catalog holds ${TABLES} tables in ${NAMESPACES} namespaces (declared in ${(populate.ms / 1000).toFixed(1)} s)`);
    const granting = await timed(async () => {
      const grants = Array.from({ length: GRANTS }, (_, i) =>
        i % 10 === 0
          ? { grantee: { role: `r${i}` }, securable: { namespace: [`ns${i % NAMESPACES}`] }, level: 'read' }
          : { grantee: { principal: `p${i}` }, securable: { table: [`ns${i % NAMESPACES}`, `t${Math.floor(i / NAMESPACES) % perNamespace}`] }, level: 'read' },
      );
      grants[0] = { grantee: { role: 'ml' }, securable: { namespace: ['ns7'] }, level: 'write' };
      for (let i = 0; i < grants.length; i += 50) await Promise.all(grants.slice(i, i + 50).map((g) => send(`${server.url}/v1/grants/create`, ROOT_KEY, g)));
    });
    console.log(`${GRANTS} grants issued in ${(granting.ms / 1000).toFixed(1)} s`);

    const describe = (key?: string): Route => ({
      method: 'POST',
      path: (i) => `/v1/table/ns7%24t${(i * 7919) % perNamespace}/describe`,
      ...(key ? { headers: { 'x-api-key': key } } : {}),
    });
    const list = (key?: string): Route => ({
      method: 'GET',
      path: (i) => `/v1/namespace/ns7/table/list?limit=100&page_token=t${(i * 7919) % perNamespace}`,
      ...(key ? { headers: { 'x-api-key': key } } : {}),
    });
    const rows = {
      bareDescribe: [bare.url, bare.pid, describe()],
      adminDescribe: [server.url, server.pid, describe(ROOT_KEY)],
      grantedDescribe: [server.url, server.pid, describe(ANA_KEY)],
      bareList: [bare.url, bare.pid, list()],
      adminList: [server.url, server.pid, list(ROOT_KEY)],
      grantedList: [server.url, server.pid, list(ANA_KEY)],
    } as const;
    for (const [url, pid, route] of Object.values(rows)) await runOn(url, [pid], CONNECTIONS, 'warm-up', route, 2);
    const runs = Object.fromEntries(Object.keys(rows).map((k) => [k, [] as Run[]])) as Record<keyof typeof rows, Run[]>;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, [url, pid, route]] of Object.entries(rows) as Array<[keyof typeof rows, (typeof rows)[keyof typeof rows]]>) {
        runs[name].push(await runOn(url, [pid], CONNECTIONS, name, route, SECONDS / ROUNDS));
      }
    }
    const load = Object.fromEntries(Object.entries(runs).map(([k, r]) => [k, pooled(r)])) as Record<keyof typeof rows, ReturnType<typeof pooled>>;
    // The share of each turn against the bare route's turn beside it, and their median: a spell in
    // which the machine ran slower for one row than for the other moves one turn, not the verdict.
    const share = (name: keyof typeof rows, base: keyof typeof rows) =>
      median(runs[name].map((r, i) => r.requests / r.seconds / (runs[base][i].requests / runs[base][i].seconds)));
    const row = (path: string, name: keyof typeof rows, base: keyof typeof rows) => ({
      path,
      'req/s': Math.round(load[name].rps),
      'p99 ms': load[name].p99,
      'share of bare': share(name, base).toFixed(2),
      'server CPU µs/req': load[name].cpuUs.toFixed(1),
    });
    report(`Catalog reads with ${GRANTS} grants over ${TABLES} tables, ${CONNECTIONS} connections, ${SECONDS} s each in ${ROUNDS} turns (share: median of the turns' shares), every request logged`, [
      row('bare Fastify route (baseline)', 'bareDescribe', 'bareDescribe'),
      row('DescribeTable, admin key (its own level)', 'adminDescribe', 'bareDescribe'),
      row('DescribeTable, key of level none, write by a role grant', 'grantedDescribe', 'bareDescribe'),
      row('bare Fastify route (baseline, list run)', 'bareList', 'bareList'),
      row('ListTables 100 per page, admin key', 'adminList', 'bareList'),
      row('ListTables 100 per page, by a role grant', 'grantedList', 'bareList'),
    ]);
  } finally {
    bare.stop();
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
