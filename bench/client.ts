import * as lancedb from '@lancedb/lancedb';
import { join } from 'node:path';
import { finalManifestName, versionsDirOf } from '@app/catalog';
import { SqliteEventStore } from '@app/event-store';
import { cpuOf, inTurn, median, report, scratchDir, startApiAndWorker, startBareServer, startFloorCatalog, startServer, timed, timedWithCpu, vectorTable } from './support';

/**
 * The real client's workload through this catalog (managed versioning: every commit is a
 * `version/create`) against lancedb's own `dir` namespace on local files: create BENCH_CLIENT_TABLES
 * tables, BENCH_CLIENT_APPENDS appends to each, then open, count and search each table. Beside
 * it: this catalog with its store swapped for the minimal catalog's (bench/log-store-server.ts),
 * which tells the store's share from the request path's; this catalog without managed versioning,
 * where the client commits to storage itself; and the minimal catalog of the design in its two
 * forms (bench/floor-catalog.ts). The sides take turns table by table and each side's steps are
 * timed apart.
 */
const TABLES = Number(process.env.BENCH_CLIENT_TABLES ?? 20);
const APPENDS = Number(process.env.BENCH_CLIENT_APPENDS ?? 50);
/** The append sizes measured, one after the other in the same run (comma-separated). */
const ROW_SIZES = (process.env.BENCH_CLIENT_ROWS ?? '100,2000').split(',').map(Number);
/**
 * Untimed tables of APPENDS appends on each side first. The server's request path reaches V8's
 * optimising tier only after a few thousand requests (measured: 2,000 commits of warm-up took the
 * server's CPU per commit from 2.2 to 0.8-1.2 ms), and a catalog in service is long past that.
 */
const WARM_TABLES = Number(process.env.BENCH_CLIENT_WARM_TABLES ?? 40);
/**
 * Then more untimed tables on the catalogs alone (the client's own code is warm by then). Node 22's
 * V8 optimises a function with TurboFan after about 3,000 calls (`--invocation-count-for-turbofan`;
 * Maglev, the tier between, is off in Node 22), and a function the server calls once per commit
 * only gets there after 3,000 commits: WARM_TABLES alone (2,240 calls) left the timed 100-row
 * appends running the commit path in V8's baseline tier and paying for its optimisation.
 */
const SERVER_WARM_TABLES = Number(process.env.BENCH_CLIENT_SERVER_WARM_TABLES ?? 40);
const DIM = 16;
/** Catalog round trips and durable writes the workload makes per table through a managed catalog. */
const ROUND_TRIPS_PER_TABLE = 4 + APPENDS + 2; // declare, version/list x2, version/create; a version/create per append; describe, version/list
const DURABLE_WRITES_PER_TABLE = 2 + APPENDS; // the declaration and the first version; one version per append

type Side = {
  db: lancedb.Connection;
  namespace: string[];
  ms: number;
  /** Each table's create-and-append time, in table order: paired with the same table's on the other sides. */
  tableMs: number[];
  rows: number;
  server?: { pid: number; userUs: number; systemUs: number };
};

/** A side with nothing measured yet; `server` is the process whose CPU its steps are charged with. */
function sideOf(db: lancedb.Connection, namespace: string[], server?: { pid: number }): Side {
  return { db, namespace, ms: 0, tableMs: [], rows: 0, ...(server ? { server: { pid: server.pid, userUs: 0, systemUs: 0 } } : {}) };
}

/** Times one step on one side, adding to that side's total (and to the CPU its server spent, where it has one). */
async function step(side: Side, work: () => Promise<void>): Promise<number> {
  if (!side.server) {
    const { ms } = await timed(work);
    side.ms += ms;
    return ms;
  }
  const { ms, user, system } = await timedWithCpu(side.server.pid, work);
  side.ms += ms;
  side.server.userUs += user;
  side.server.systemUs += system;
  return ms;
}

/**
 * The workload on every side, table by table in turn, so that load from elsewhere on the machine
 * falls on all alike: create a table and append to it, then open, count and search it.
 */
async function workload(sides: Side[], rows: number, tables = TABLES, appends = APPENDS): Promise<void> {
  for (let t = 0; t < tables; t++) {
    for (const side of inTurn(sides, t)) {
      const ms = await step(side, async () => {
        const table = await side.db.createTable(`t${t}`, vectorTable(0, rows, DIM, t), side.namespace);
        for (let a = 1; a <= appends; a++) await table.add(vectorTable(a * rows, rows, DIM, t));
        table.close();
      });
      side.tableMs.push(ms);
    }
  }
  for (let t = 0; t < tables; t++) {
    for (const side of inTurn(sides, t)) {
      await step(side, async () => {
        const table = await side.db.openTable(`t${t}`, side.namespace);
        side.rows += await table.countRows();
        const hits = await table.search(Array.from({ length: DIM }, () => 0.5)).limit(10).toArray();
        if (hits.length !== 10) throw new Error(`search on t${t} found ${hits.length} rows`);
        table.close();
      });
    }
  }
}

/**
 * The median over tables of one side's create-and-append time over `dir`'s for the same table,
 * measured in the same turn, seconds apart at most. Load from elsewhere on a shared machine comes
 * in bursts of a few hundred ms that land on one side's table; the total ratio takes them in, the
 * median of pairs does not.
 */
function medianRatio(sideMs: number[], dirMs: number[]): number {
  return median(sideMs.map((ms, t) => ms / dirMs[t]));
}

const SAMPLES = 2_000;

/** The lancedb client's own round trip to a route with nothing behind it (ListNamespaces on a bare Fastify), in ms. */
async function bareRoundTrip(): Promise<number> {
  const bare = await startBareServer();
  try {
    const db = await lancedb.connectNamespace('rest', { uri: bare.url });
    for (let i = 0; i < 200; i++) await db.listNamespaces(['x']);
    return (await timed(async () => {
      for (let i = 0; i < SAMPLES; i++) await db.listNamespaces(['x']);
    })).ms / SAMPLES;
  } finally {
    bare.stop();
  }
}

/**
 * The catalog's own durable appends while the workload ran, in ms each: the store's append latency
 * from /metrics (an fsync of SQLite's WAL each). Taken in place rather than on an idle store because
 * an fsync on this file system also writes out what the client wrote meanwhile: alone, the same
 * append takes about half as long (`durableAppendAlone`).
 */
async function appendSeconds(url: string): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (series: string) => Number(new RegExp(`lance_catalog_event_store_append_duration_seconds_${series}\\{outcome="appended"\\} (\\S+)`).exec(text)?.[1] ?? NaN);
  return { sum: value('sum'), count: value('count') };
}

/** One event appended durably to an idle embedded store (a WAL fsync each), as the catalog's writer does for one commit, in ms. */
async function durableAppendAlone(): Promise<number> {
  const store = new SqliteEventStore(join(scratchDir('bench-store-'), 'events.sqlite3'));
  try {
    let revision: number | 'no_stream' = 'no_stream';
    const append = async (i: number) => {
      const data = { table: ['ns', 't'], tableUuid: 'x', version: i + 1, manifestPath: versionsDirOf('w/t.lance') + finalManifestName(i + 1, 'V1'), manifestSize: 600, namingScheme: 'V2' };
      revision = (await store.append('catalog-default', [{ type: 'TableVersionCreated', data, metadata: { transactionId: `t${i}`, operation: 'CreateTableVersion' } }], revision)).nextExpectedRevision;
    };
    for (let i = 0; i < 200; i++) await append(i);
    return (await timed(async () => {
      for (let i = 200; i < 200 + SAMPLES; i++) await append(i);
    })).ms / SAMPLES;
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  // The API and its worker apart, as README runs them separately: the catalog calls are the API
  // process's, and the worker's maintenance (the planner compacts each table once its appends stop,
  // which the minimal catalog never does) is measured and reported on its own.
  const server = await startApiAndWorker();
  // Its store lives in its one process, so no worker can share it: without the planner, its CPU is
  // the catalog calls' alone, as the API process's is above.
  const onLog = await startServer({ MAINTENANCE_PLANNER: 'false' }, 'dist/bench/log-store-server.js');
  const unmanaged = await startServer({ MANAGED_VERSIONING: 'false' });
  const floor = await startFloorCatalog('journaled');
  const recordOnly = await startFloorCatalog('record-only');
  try {
    const rest = await lancedb.connectNamespace('rest', { uri: server.url });
    const restOnLog = await lancedb.connectNamespace('rest', { uri: onLog.url });
    const restUnmanaged = await lancedb.connectNamespace('rest', { uri: unmanaged.url });
    const minimal = await lancedb.connectNamespace('rest', { uri: floor.url });
    const minimalRecordOnly = await lancedb.connectNamespace('rest', { uri: recordOnly.url });
    const dirSide = async () => sideOf(await lancedb.connectNamespace('dir', { root: scratchDir('bench-dir-') }), []);
    // Untimed: the same workload on each side first, so none is measured warming up. The bench's
    // own /metrics read comes from another HTTP client: when the first one came right before the
    // timed steps, V8 deoptimised about 30 functions of the server's request path on its new object
    // shapes and optimised them again while the timed steps ran. Read once here, it is warm-up too.
    await appendSeconds(server.url);
    await appendSeconds(onLog.url);
    await appendSeconds(unmanaged.url);
    for (const db of [rest, restOnLog, restUnmanaged]) await db.createNamespace(['warm']);
    await workload(
      [await dirSide(), sideOf(rest, ['warm']), sideOf(restOnLog, ['warm']), sideOf(restUnmanaged, ['warm']), sideOf(minimal, ['warm']), sideOf(minimalRecordOnly, ['warm'])],
      ROW_SIZES[0],
      WARM_TABLES,
      APPENDS,
    );
    for (const db of [rest, restOnLog, restUnmanaged, minimal, minimalRecordOnly]) await db.createNamespace(['warm-servers']);
    await workload(
      [sideOf(rest, ['warm-servers']), sideOf(restOnLog, ['warm-servers']), sideOf(restUnmanaged, ['warm-servers']), sideOf(minimal, ['warm-servers']), sideOf(minimalRecordOnly, ['warm-servers'])],
      ROW_SIZES[0],
      SERVER_WARM_TABLES,
      APPENDS,
    );
    // What any catalog of this design adds at the least: each catalog call a round trip, each commit
    // a durable write. Measured in the same run; the floor is the `dir` time plus those alone.
    const roundTrip = await bareRoundTrip();
    const appendAlone = await durableAppendAlone();
    const verdicts: string[] = [];
    for (const rows of ROW_SIZES) {
      const namespace = `bench${rows}`;
      for (const db of [rest, restOnLog, restUnmanaged, minimal, minimalRecordOnly]) await db.createNamespace([namespace]);
      const viaDir = await dirSide();
      const viaCatalog = sideOf(rest, [namespace], server);
      const viaCatalogOnLog = sideOf(restOnLog, [namespace], onLog);
      const viaUnmanaged = sideOf(restUnmanaged, [namespace], unmanaged);
      const viaFloor = sideOf(minimal, [namespace], floor);
      const viaRecordOnly = sideOf(minimalRecordOnly, [namespace], recordOnly);
      const appendsBefore = await appendSeconds(server.url);
      const workerBefore = cpuOf(server.worker.pid);
      await workload([viaDir, viaCatalog, viaCatalogOnLog, viaUnmanaged, viaFloor, viaRecordOnly], rows);
      const workerMsPerTable = (cpuOf(server.worker.pid) - workerBefore) / 1000 / TABLES;
      const appendsAfter = await appendSeconds(server.url);
      const append = (1000 * (appendsAfter.sum - appendsBefore.sum)) / (appendsAfter.count - appendsBefore.count);
      for (const side of [viaCatalog, viaCatalogOnLog, viaUnmanaged, viaFloor, viaRecordOnly]) {
        if (viaDir.rows !== side.rows) throw new Error(`row counts differ: ${viaDir.rows} vs ${side.rows}`);
      }
      const floorMs = viaDir.ms + TABLES * (ROUND_TRIPS_PER_TABLE * roundTrip + DURABLE_WRITES_PER_TABLE * append);
      const ops = TABLES * (APPENDS + 3);
      const row = (path: string, ms: number, side?: Side) => ({
        path,
        ms: ms.toFixed(0),
        'ops/s': Math.round(ops / (ms / 1000)),
        ratio: (ms / viaDir.ms).toFixed(2),
        'median table ratio': side ? medianRatio(side.tableMs, viaDir.tableMs).toFixed(2) : '-',
      });
      const perCall = (us: number) => (us / 1000 / (TABLES * ROUND_TRIPS_PER_TABLE)).toFixed(2);
      const cpuPerCall = ({ server: s }: Side) =>
        `server CPU ${perCall(s!.userUs + s!.systemUs)} ms per catalog call: ${perCall(s!.userUs)} user, ${perCall(s!.systemUs)} kernel`;
      // Without managed versioning the client makes fewer catalog calls, so its server's CPU is given per table.
      const cpuPerTable = ({ server: s }: Side) => `server CPU ${((s!.userUs + s!.systemUs) / 1000 / TABLES).toFixed(1)} ms per table`;
      report(`The lancedb client: ${TABLES} tables x ${APPENDS} appends of ${rows} rows, then open, count, search`, [
        row("lancedb's own dir namespace (baseline)", viaDir.ms, viaDir),
        row(`this catalog, managed versioning (${cpuPerCall(viaCatalog)}; its worker, maintenance: ${workerMsPerTable.toFixed(1)} ms CPU per table)`, viaCatalog.ms, viaCatalog),
        row(`this catalog on the minimal catalog's store, bench/log-store-server.ts, no maintenance planner (${cpuPerCall(viaCatalogOnLog)})`, viaCatalogOnLog.ms, viaCatalogOnLog),
        row(`this catalog without managed versioning: the client commits to storage itself (${cpuPerTable(viaUnmanaged)}; managed: ${cpuPerTable(viaCatalog)})`, viaUnmanaged.ms, viaUnmanaged),
        row(`minimal catalog of this design, bench/floor-catalog.ts, manifest journaled (${cpuPerCall(viaFloor)})`, viaFloor.ms, viaFloor),
        row(`the same, version record only: manifest not durable (${cpuPerCall(viaRecordOnly)})`, viaRecordOnly.ms, viaRecordOnly),
        row(
          `floor of the design: dir + ${ROUND_TRIPS_PER_TABLE} bare round trips (${(roundTrip * 1000).toFixed(0)} µs) + ${DURABLE_WRITES_PER_TABLE} durable appends (${(append * 1000).toFixed(0)} µs; ${(appendAlone * 1000).toFixed(0)} µs on an idle store) per table`,
          floorMs,
        ),
      ]);
      const cpuPerCallUs = ({ server: s }: Side) => (s!.userUs + s!.systemUs) / (TABLES * ROUND_TRIPS_PER_TABLE);
      verdicts.push(`this catalog / minimal catalog, time: ${(viaCatalog.ms / viaFloor.ms).toFixed(2)}x (${rows}-row appends)`);
      verdicts.push(
        `this catalog / minimal catalog, server CPU per catalog call: ${(cpuPerCallUs(viaCatalog) / cpuPerCallUs(viaFloor)).toFixed(2)}x (${(cpuPerCallUs(viaCatalog) / 1000).toFixed(2)} ms against ${(cpuPerCallUs(viaFloor) / 1000).toFixed(2)} ms; ${rows}-row appends)`,
      );
    }
    // Last, for scripts: this catalog against the minimal catalog of its design, time and CPU per call, at each size.
    for (const line of verdicts) console.log(line);
  } finally {
    floor.stop();
    recordOnly.stop();
    await Promise.all([server.stop(), onLog.stop(), unmanaged.stop()]);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
