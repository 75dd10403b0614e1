import * as lancedb from '@lancedb/lancedb';
import { startSwift } from '../test/support/swift';
import { cpuOf, inTurn, report, startApiAndWorker, startFloorCatalog, timed, timedWithCpu, vectorTable } from './support';

/**
 * The lancedb client's workload with the warehouse on an object store: a real S3 server (OpenStack
 * Swift with s3api, from Debian's packages, as the tests start it) through this catalog with
 * managed versioning, beside the minimal catalog of the same design (bench/floor-catalog.ts: the
 * calls answered from memory, each commit a server-side copy and one fdatasync'd record) on the
 * same Swift. No `dir` baseline here: Lance alone cannot commit to Swift (it refuses conditional
 * PUTs). The sides take turns table by table. Then the data plane on S3: this catalog's
 * CountTableRows and QueryTable over HTTP beside the same count and search by the lancedb client
 * through the catalog, on the same table.
 */
const TABLES = Number(process.env.BENCH_S3_TABLES ?? 20);
const APPENDS = Number(process.env.BENCH_S3_APPENDS ?? 20);
const ROWS = Number(process.env.BENCH_S3_ROWS ?? 100);
const WARM_TABLES = Number(process.env.BENCH_S3_WARM_TABLES ?? 5);
const QUERIES = Number(process.env.BENCH_S3_QUERIES ?? 100);
const DIM = 16;

interface Side {
  name: string;
  db: lancedb.Connection;
  namespace: string[];
  pid: number;
  ms: number;
  cpuUs: number;
  calls: number;
}

async function workload(sides: Side[], tables: number, timedRun: boolean): Promise<void> {
  for (let t = 0; t < tables; t++) {
    // Swift updates its listings after answering: in a fixed order that work lands on the side after.
    for (const side of inTurn(sides, t)) {
      const run = async () => {
        const table = await side.db.createTable(`t${t}`, vectorTable(0, ROWS, DIM, t), side.namespace);
        for (let a = 1; a <= APPENDS; a++) await table.add(vectorTable(a * ROWS, ROWS, DIM, t));
        table.close();
        const reopened = await side.db.openTable(`t${t}`, side.namespace);
        if ((await reopened.countRows()) !== ROWS * (APPENDS + 1)) throw new Error(`t${t}: wrong count on ${side.name}`);
        await reopened.search(Array.from({ length: DIM }, () => 0.5)).limit(10).toArray();
        reopened.close();
      };
      if (!timedRun) {
        await run();
        continue;
      }
      const { ms, user, system } = await timedWithCpu(side.pid, run);
      side.ms += ms;
      side.cpuUs += user + system;
    }
  }
}

async function main(): Promise<void> {
  const swift = await startSwift();
  await swift.createBucket('bench');
  Object.assign(process.env, swift.awsEnv());
  // The API and its worker apart (README's separate roles): the worker's maintenance is reported on its own.
  const server = await startApiAndWorker({ WAREHOUSE: 's3://bench/catalog', CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()) });
  const floor = await startFloorCatalog('record-only', 's3://bench/floor');
  try {
    const catalog = await lancedb.connectNamespace('rest', { uri: server.url });
    const minimal = await lancedb.connectNamespace('rest', { uri: floor.url });
    await catalog.createNamespace(['warm']);
    await catalog.createNamespace(['bench']);
    const side = (name: string, db: lancedb.Connection, ns: string, pid: number): Side => ({ name, db, namespace: [ns], pid, ms: 0, cpuUs: 0, calls: 0 });
    await workload([side('catalog', catalog, 'warm', server.pid), side('floor', minimal, 'warm', floor.pid)], WARM_TABLES, false);
    const sides = [side('catalog', catalog, 'bench', server.pid), side('floor', minimal, 'bench', floor.pid)];
    const workerBefore = cpuOf(server.worker.pid);
    await workload(sides, TABLES, true);
    const workerMsPerTable = (cpuOf(server.worker.pid) - workerBefore) / 1000 / TABLES;
    const [viaCatalog, viaFloor] = sides;
    const ops = TABLES * (APPENDS + 3);
    report(`The lancedb client on S3 (Swift): ${TABLES} tables x ${APPENDS} appends of ${ROWS} rows, then open, count, search`, [
      { path: 'minimal catalog of this design on the same Swift, bench/floor-catalog.ts (baseline)', ms: viaFloor.ms.toFixed(0), 'ops/s': Math.round(ops / (viaFloor.ms / 1000)), ratio: '1.00', 'server CPU ms/table': (viaFloor.cpuUs / 1000 / TABLES).toFixed(1) },
      { path: `this catalog, managed versioning, WAREHOUSE=s3:// (its worker, maintenance: ${workerMsPerTable.toFixed(1)} ms CPU per table)`, ms: viaCatalog.ms.toFixed(0), 'ops/s': Math.round(ops / (viaCatalog.ms / 1000)), ratio: (viaCatalog.ms / viaFloor.ms).toFixed(2), 'server CPU ms/table': (viaCatalog.cpuUs / 1000 / TABLES).toFixed(1) },
    ]);

    // The data plane on S3: the server's own reads beside the lancedb client's through the catalog.
    const http = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const probe = Array.from({ length: DIM }, () => 0.5);
    const table = await catalog.openTable('t0', ['bench']);
    for (let i = 0; i < 10; i++) {
      await http('/v1/table/bench%24t0/count_rows', { predicate: 'id > 100' });
      await table.countRows('id > 100');
    }
    let countHttp = 0;
    let countClient = 0;
    let queryHttp = 0;
    let queryClient = 0;
    for (let i = 0; i < QUERIES; i++) {
      countHttp += (await timed(() => http('/v1/table/bench%24t0/count_rows', { predicate: `id > ${i}` }))).ms;
      countClient += (await timed(async () => void (await table.countRows(`id > ${i}`)))).ms;
      queryHttp += (await timed(() => http('/v1/table/bench%24t0/query', { vector: { single_vector: probe }, k: 10 }))).ms;
      queryClient += (await timed(async () => void (await table.search(probe).limit(10).toArray()))).ms;
    }
    table.close();
    report(`The data plane on S3 (Swift): ${QUERIES} counts with a predicate and ${QUERIES} searches (k=10) on a table of ${ROWS * (APPENDS + 1)} rows, taking turns`, [
      { path: 'CountTableRows: the lancedb client through the catalog, reading S3 itself (baseline)', 'ms each': (countClient / QUERIES).toFixed(2), ratio: '1.00' },
      { path: 'CountTableRows over HTTP (the server reads S3)', 'ms each': (countHttp / QUERIES).toFixed(2), ratio: (countHttp / countClient).toFixed(2) },
      { path: 'search: the lancedb client through the catalog (baseline)', 'ms each': (queryClient / QUERIES).toFixed(2), ratio: '1.00' },
      { path: 'QueryTable over HTTP (the server reads S3)', 'ms each': (queryHttp / QUERIES).toFixed(2), ratio: (queryHttp / queryClient).toFixed(2) },
    ]);
    // Last, for scripts: this catalog against the minimal catalog on the same store, time and CPU per table.
    console.log(`this catalog / minimal catalog on S3, time: ${(viaCatalog.ms / viaFloor.ms).toFixed(2)}x (${ROWS}-row appends)`);
    console.log(`this catalog / minimal catalog on S3, server CPU per table: ${(viaCatalog.cpuUs / viaFloor.cpuUs).toFixed(2)}x`);
    catalog.close();
    minimal.close();
  } finally {
    floor.stop();
    await server.stop();
    await swift.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
