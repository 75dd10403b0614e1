import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { HierarchicalNSW } from 'hnswlib-node';
import { BenchServer, closeClient, post, postArrow, postForBytes, report, scratchDir, settle, startBareServer, startServer, timed, vectorTable } from './support';

/**
 * Data-plane benchmarks, each measured side by side with its baseline (lancedb on a local
 * directory) in the same run. Where both sides repeat an operation, the two are interleaved call by
 * call, so load from other processes on the machine falls on both alike.
 *  1. InsertIntoTable (HTTP, Arrow IPC bodies) vs `table.add`, batch by batch, beside two
 *     decompositions: lancedb as a client of this catalog (the commit path alone) and the same
 *     bodies posted to a bare server (HTTP alone);
 *  2. CountTableRows with a predicate vs `table.countRows(filter)`;
 *  3. QueryTable vector search (k=10, Arrow IPC file answer) vs `table.search(v).limit(10).toArrow()`,
 *     with no index, then with an IVF_PQ index (whose build time through the queue is compared too);
 *  4. HNSW (hnswlib-node) vs IVF_HNSW_SQ: recall@10 and queries/s, on a table of BENCH_HNSW_ROWS rows.
 * BENCH_GROWTH=1 runs only the insert comparison at 10,000, 100,000 and 1,000,000 rows.
 */
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const DIM = Number(process.env.BENCH_DIM ?? 64);
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000);
/** 0 skips the query comparisons (the IVF_PQ build still runs unless BENCH_IVF=0). */
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
/** 0 skips the count comparison. */
const COUNTS = Number(process.env.BENCH_COUNTS ?? 200);
/** 0 skips the queries without an index (a full scan each: the slowest part at 1M rows). */
const FLAT = process.env.BENCH_FLAT !== '0';
/** 0 skips the IVF_PQ build and the indexed queries. */
const IVF = process.env.BENCH_IVF !== '0';
/** 0 skips the HNSW comparison; its graph build is slow, so it runs on its own, smaller table. */
const HNSW_ROWS = Number(process.env.BENCH_HNSW_ROWS ?? 20_000);
const GROWTH = process.env.BENCH_GROWTH === '1';

interface Sides {
  server: BenchServer;
  /** lancedb on a local directory: the baseline. */
  direct: lancedb.Connection;
  /** That directory. */
  directRoot: string;
  /** lancedb as a client of this catalog: writes the files itself, commits through version/create. */
  client: lancedb.Connection;
  /** A bare Fastify process that reads Arrow bodies: what HTTP alone costs. */
  bare: string;
}

function batchesOf(rows: number): arrow.Table[] {
  return Array.from({ length: Math.ceil(rows / BATCH) }, (_, i) => vectorTable(i * BATCH, Math.min(BATCH, rows - i * BATCH), DIM));
}

const elapsed = async (work: () => Promise<unknown>) => (await timed(work)).ms;

/**
 * Inserts the same batches four ways, batch by batch in turn: directly (baseline), as a lancedb
 * client of this catalog (the managed-versioning commit path without HTTP bodies), as HTTP bodies
 * to a bare server that only reads them (the transport floor), and through InsertIntoTable.
 */
async function insertAll(sides: Sides, name: string, batches: arrow.Table[]) {
  const { server, direct, client, bare } = sides;
  const time = { api: 0, lance: 0, client: 0, bare: 0 };
  let table!: lancedb.Table;
  let viaClient!: lancedb.Table;
  time.api += await elapsed(() => postArrow(`${server.url}/v1/table/${name}/create`, batches[0]));
  time.lance += await elapsed(async () => (table = await direct.createTable(name, batches[0])));
  time.client += await elapsed(async () => (viaClient = await client.createTable(`${name}_client`, batches[0])));
  time.bare += await elapsed(() => postArrow(`${bare}/arrow`, batches[0]));
  for (const b of batches.slice(1)) {
    time.api += await elapsed(() => postArrow(`${server.url}/v1/table/${name}/insert`, b));
    time.lance += await elapsed(() => table.add(b));
    time.client += await elapsed(() => viaClient.add(b));
    time.bare += await elapsed(() => postArrow(`${bare}/arrow`, b));
  }
  viaClient.close();
  return { time, table };
}

/** Untimed inserts on every path into scratch tables, so no path is measured while it is still cold. */
async function warmUpInserts(sides: Sides): Promise<void> {
  const { table } = await insertAll(sides, 'warm_up', batchesOf(Math.min(ROWS, 5 * BATCH)));
  table.close();
}

function insertRows(rows: number, time: { api: number; lance: number; client: number; bare: number }) {
  const row = (path: string, ms: number) => ({
    rows,
    path,
    ms: ms.toFixed(0),
    'rows/s': Math.round(rows / (ms / 1000)),
    'µs/row': ((ms * 1000) / rows).toFixed(2),
    ratio: (ms / time.lance).toFixed(2),
  });
  return [
    row('lancedb table.add (baseline)', time.lance),
    row('InsertIntoTable through the API', time.api),
    row('lancedb table.add as a client of this catalog (version/create per commit)', time.client),
    row('HTTP only: the same bodies to a bare Fastify that reads them', time.bare),
  ];
}

/** Untimed calls on each side first: the first ones load metadata and indexes into caches, and the server's JavaScript gets compiled. */
const WARM_UP = 20;

async function countBoth(server: BenchServer, table: lancedb.Table, name: string) {
  let api = 0;
  let lance = 0;
  for (let i = 0; i < WARM_UP; i++) {
    await postForBytes(`${server.url}/v1/table/${name}/count_rows`, { predicate: `id > ${i}` });
    await table.countRows(`id > ${i}`);
  }
  for (let i = 0; i < COUNTS; i++) {
    const predicate = `id > ${(i * 7919) % ROWS}`;
    let viaApi = 0;
    let viaLance = 0;
    api += await elapsed(async () => (viaApi = Number((await postForBytes(`${server.url}/v1/table/${name}/count_rows`, { predicate })).toString())));
    lance += await elapsed(async () => (viaLance = await table.countRows(predicate)));
    if (viaApi !== viaLance) throw new Error(`count_rows ${predicate}: API ${viaApi}, lancedb ${viaLance}`);
  }
  const rate = (ms: number) => Math.round(COUNTS / (ms / 1000));
  report(`CountTableRows with a predicate (id > N), ${ROWS} rows, ${COUNTS} counts`, [
    { path: 'lancedb table.countRows(filter) (baseline)', 'ms/op': (lance / COUNTS).toFixed(2), 'ops/s': rate(lance), ratio: '1.00' },
    { path: 'CountTableRows through the API', 'ms/op': (api / COUNTS).toFixed(2), 'ops/s': rate(api), ratio: (api / lance).toFixed(2) },
  ]);
}

const queryVectors = (n: number) => Array.from({ length: n }, (_, i) => Array.from(vectorTable(0, 1, DIM, 1000 + i).getChild('vector')!.get(0) as Float32Array));

/**
 * QueryTable against lancedb's own search, with a third side in turn: the same query through a
 * minimal HTTP server (bench/bare-server.ts) that keeps the baseline's table open and answers
 * Lance's Arrow IPC file, so that what HTTP and a second process cost, whoever serves the query,
 * is measured in the same run.
 */
async function compareQueries(sides: Sides, table: lancedb.Table, name: string, what: string) {
  const { server, bare, directRoot } = sides;
  const time = { api: 0, lance: 0, minimal: 0 };
  const viaApi = async (q: number[]) => arrow.tableFromIPC(await postForBytes(`${server.url}/v1/table/${name}/query`, { vector: { single_vector: q }, k: 10 }));
  const viaMinimal = async (q: number[]) => arrow.tableFromIPC(await postForBytes(`${bare}/query`, { root: directRoot, table: name, vector: q, k: 10, phase: what }));
  const viaLance = async (q: number[]) => (await table.search(q).limit(10).toArrow()) as unknown as arrow.Table;
  for (const q of queryVectors(WARM_UP)) {
    await viaApi(q);
    await viaLance(q);
    await viaMinimal(q);
  }
  for (const q of queryVectors(QUERIES)) {
    const rows: number[] = [];
    time.api += await elapsed(async () => rows.push((await viaApi(q)).numRows));
    time.lance += await elapsed(async () => rows.push((await viaLance(q)).numRows));
    time.minimal += await elapsed(async () => rows.push((await viaMinimal(q)).numRows));
    if (new Set(rows).size !== 1) throw new Error(`query: API, lancedb and minimal server gave ${rows.join(', ')} rows`);
  }
  const qps = (ms: number) => Math.round(QUERIES / (ms / 1000));
  const row = (path: string, ms: number) => ({ path, 'ms/query': (ms / QUERIES).toFixed(2), 'queries/s': qps(ms), ratio: (ms / time.lance).toFixed(2) });
  report(`QueryTable vector search, ${what}, ${ROWS} rows, ${DIM}-d, k=10, ${QUERIES} queries`, [
    row('lancedb table.search(v).limit(10).toArrow() (baseline)', time.lance),
    row('QueryTable through the API (Arrow IPC file)', time.api),
    row('the same query through a minimal HTTP server (Fastify + lancedb, nothing else)', time.minimal),
  ]);
}

async function ivf(server: BenchServer, table: lancedb.Table, name: string) {
  const options = { column: 'vector', index_type: 'IVF_PQ', num_partitions: 16, num_sub_vectors: DIM / 8 };
  const queued = await timed(async () => {
    const { transaction_id } = await post(`${server.url}/v1/table/${name}/create_index`, { ...options, name: 'pq' });
    const tx = await settle(server.url, transaction_id);
    if (tx.status !== 'Succeeded') throw new Error(JSON.stringify(tx));
  });
  const directBuild = await timed(() => table.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: 16, numSubVectors: DIM / 8 }), name: 'pq' }));
  report(`IVF_PQ index build, ${ROWS} rows`, [
    { path: 'direct createIndex (baseline)', ms: directBuild.ms.toFixed(0), ratio: '1.00' },
    { path: 'CreateTableIndex through the queue, until Succeeded', ms: queued.ms.toFixed(0), ratio: (queued.ms / directBuild.ms).toFixed(2) },
  ]);
}

/** HNSW vs IVF_HNSW_SQ, recall against exact search, on a table of its own. */
async function hnsw(sides: Sides) {
  const { server } = sides;
  const rows = HNSW_ROWS;
  const name = 'graph';
  const batches = Array.from({ length: Math.ceil(rows / BATCH) }, (_, i) => vectorTable(i * BATCH, Math.min(BATCH, rows - i * BATCH), DIM));
  const { table: directTable } = await insertAll(sides, name, batches);
  const hnswBuild = await timed(async () => {
    const { transaction_id } = await post(`${server.url}/v1/table/${name}/create_index`, { column: 'vector', index_type: 'HNSW', name: 'graph', m: 16, ef_construction: 200 });
    return settle(server.url, transaction_id);
  });
  const sqBuild = await timed(() => directTable.createIndex('vector', { config: lancedb.Index.hnswSq({ numPartitions: 1 }), name: 'sq' }));
  const queries = queryVectors(QUERIES);
  const ids = (t: arrow.Table) => t.toArray().map((r) => r.id as number);
  const truth: number[][] = [];
  for (const q of queries) truth.push(ids((await directTable.query().nearestTo(q).bypassVectorIndex().limit(10).select(['id']).toArrow()) as unknown as arrow.Table));
  const recall = (got: number[][]) => got.reduce((n, g, i) => n + g.filter((x) => truth[i].includes(x)).length, 0) / (10 * got.length);

  const graphResults: number[][] = [];
  const graphTime = await timed(async () => {
    for (const q of queries) {
      const res = await postForBytes(`${server.url}/v1/table/${name}/query`, { vector: { single_vector: q }, k: 10, ef: 100, columns: { column_names: ['id'] } });
      graphResults.push(ids(arrow.tableFromIPC(res)));
    }
  });
  const sqResults: number[][] = [];
  const sqTime = await timed(async () => {
    for (const q of queries) sqResults.push(ids((await directTable.query().nearestTo(q).ef(100).limit(10).select(['id']).toArrow()) as unknown as arrow.Table));
  });
  // The graph alone, in process, to separate hnswlib's cost from HTTP and row fetching.
  const raw = new HierarchicalNSW('l2', DIM);
  const all = (await directTable.query().select(['id', 'vector']).toArrow()) as unknown as arrow.Table;
  const rawBuild = await timed(async () => {
    raw.initIndex(all.numRows, 16, 200);
    for (let i = 0; i < all.numRows; i++) raw.addPoint(Array.from(all.getChild('vector')!.get(i) as Iterable<number>), all.getChild('id')!.get(i) as number);
  });
  raw.setEf(100);
  const rawResults: number[][] = [];
  const rawTime = await timed(async () => {
    for (const q of queries) rawResults.push(raw.searchKnn(q, 10).neighbors);
  });
  directTable.close();
  const qps = (ms: number) => Math.round(QUERIES / (ms / 1000));
  report(`Vector search, ${rows} rows, ${DIM}-d, k=10, ef=100, ${QUERIES} queries (recall against exact search)`, [
    { index: 'IVF_HNSW_SQ, direct lancedb (baseline)', 'build ms': sqBuild.ms.toFixed(0), 'recall@10': recall(sqResults).toFixed(3), 'queries/s': qps(sqTime.ms), 'qps ratio': '1.00' },
    { index: 'HNSW through QueryTable (HTTP, worker-built)', 'build ms': hnswBuild.ms.toFixed(0), 'recall@10': recall(graphResults).toFixed(3), 'queries/s': qps(graphTime.ms), 'qps ratio': (qps(graphTime.ms) / qps(sqTime.ms)).toFixed(2) },
    { index: 'hnswlib-node graph alone, in process', 'build ms': rawBuild.ms.toFixed(0), 'recall@10': recall(rawResults).toFixed(3), 'queries/s': qps(rawTime.ms), 'qps ratio': (qps(rawTime.ms) / qps(sqTime.ms)).toFixed(2) },
  ]);
}

async function growth(sides: Sides) {
  const rows: Array<Record<string, string | number>> = [];
  for (const size of [10_000, 100_000, 1_000_000]) {
    const { time, table } = await insertAll(sides, `growth_${size}`, batchesOf(size));
    table.close();
    rows.push(...insertRows(size, time));
  }
  report(`Insert growth: ${DIM}-d vectors in batches of ${BATCH}, time per row by table size`, rows);
}

async function main(): Promise<void> {
  const server = await startServer();
  const bare = await startBareServer();
  const directRoot = scratchDir('lance-direct-');
  const direct = await lancedb.connect(directRoot);
  const client = await lancedb.connectNamespace('rest', { uri: server.url });
  const sides: Sides = { server, direct, directRoot, client, bare: bare.url };
  try {
    await warmUpInserts(sides);
    if (GROWTH) return await growth(sides);
    const { time, table } = await insertAll(sides, 'bench', batchesOf(ROWS));
    report(`Insert ${ROWS} rows of ${DIM}-d vectors in batches of ${BATCH}`, insertRows(ROWS, time));
    if (COUNTS > 0) await countBoth(server, table, 'bench');
    if (FLAT && QUERIES > 0) await compareQueries(sides, table, 'bench', 'no index');
    if (IVF) {
      await ivf(server, table, 'bench');
      if (QUERIES > 0) await compareQueries(sides, table, 'bench', 'IVF_PQ index (16 partitions)');
    }
    table.close();
    if (HNSW_ROWS > 0) await hnsw(sides);
  } finally {
    direct.close();
    client.close();
    bare.stop();
    closeClient();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
