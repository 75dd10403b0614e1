import * as lancedb from '@lancedb/lancedb';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { HierarchicalNSW } from 'hnswlib-node';
import { BenchServer, post, postArrow, report, settle, startServer, timed, vectorTable } from './support';

/**
 * Data-plane benchmarks, each measured side by side with its baseline (lancedb on a local
 * directory) in the same run. Where both sides repeat an operation, the two are interleaved call by
 * call, so load from other processes on the machine falls on both alike.
 *  1. InsertIntoTable (HTTP, Arrow IPC bodies) vs `table.add`, batch by batch;
 *  2. CountTableRows with a predicate vs `table.countRows(filter)`;
 *  3. QueryTable vector search (k=10, Arrow IPC file answer) vs `table.search(v).limit(10).toArrow()`,
 *     with no index, then with an IVF_PQ index (whose build time through the queue is compared too);
 *  4. HNSW (hnswlib-node) vs IVF_HNSW_SQ: recall@10 and queries/s, on a table of BENCH_HNSW_ROWS rows.
 * BENCH_GROWTH=1 runs only the insert comparison at 10,000, 100,000 and 1,000,000 rows.
 */
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const DIM = Number(process.env.BENCH_DIM ?? 64);
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const COUNTS = Number(process.env.BENCH_COUNTS ?? 200);
/** 0 skips the IVF_PQ build and the indexed queries. */
const IVF = process.env.BENCH_IVF !== '0';
/** 0 skips the HNSW comparison; its graph build is slow, so it runs on its own, smaller table. */
const HNSW_ROWS = Number(process.env.BENCH_HNSW_ROWS ?? 20_000);
const GROWTH = process.env.BENCH_GROWTH === '1';

type Direct = lancedb.Connection;

function batchesOf(rows: number): arrow.Table[] {
  return Array.from({ length: Math.ceil(rows / BATCH) }, (_, i) => vectorTable(i * BATCH, Math.min(BATCH, rows - i * BATCH), DIM));
}

const elapsed = async (work: () => Promise<unknown>) => (await timed(work)).ms;

/** Inserts the same batches through the API and directly, alternating batch by batch. */
async function insertBoth(server: BenchServer, direct: Direct, name: string, batches: arrow.Table[]) {
  let api = await elapsed(() => postArrow(`${server.url}/v1/table/${name}/create`, batches[0]));
  let table!: lancedb.Table;
  let lance = await elapsed(async () => (table = await direct.createTable(name, batches[0])));
  for (const b of batches.slice(1)) {
    api += await elapsed(() => postArrow(`${server.url}/v1/table/${name}/insert`, b));
    lance += await elapsed(() => table.add(b));
  }
  return { api, lance, table };
}

function insertRows(rows: number, api: number, lance: number) {
  const perRow = (ms: number) => ((ms * 1000) / rows).toFixed(2);
  return [
    { rows, path: 'lancedb table.add (baseline)', ms: lance.toFixed(0), 'rows/s': Math.round(rows / (lance / 1000)), 'µs/row': perRow(lance), ratio: '1.00' },
    { rows, path: 'InsertIntoTable through the API', ms: api.toFixed(0), 'rows/s': Math.round(rows / (api / 1000)), 'µs/row': perRow(api), ratio: (api / lance).toFixed(2) },
  ];
}

async function postJson(url: string, body: unknown): Promise<Response> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res;
}

async function countBoth(server: BenchServer, table: lancedb.Table, name: string) {
  let api = 0;
  let lance = 0;
  for (let i = 0; i < COUNTS; i++) {
    const predicate = `id > ${(i * 7919) % ROWS}`;
    let viaApi = 0;
    let viaLance = 0;
    api += await elapsed(async () => (viaApi = Number(await (await postJson(`${server.url}/v1/table/${name}/count_rows`, { predicate })).text())));
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

async function queryBoth(server: BenchServer, table: lancedb.Table, name: string, what: string) {
  let api = 0;
  let lance = 0;
  for (const q of queryVectors(QUERIES)) {
    let viaApi!: arrow.Table;
    let viaLance!: arrow.Table;
    api += await elapsed(async () => {
      const res = await postJson(`${server.url}/v1/table/${name}/query`, { vector: { single_vector: q }, k: 10 });
      viaApi = arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    });
    lance += await elapsed(async () => (viaLance = (await table.search(q).limit(10).toArrow()) as unknown as arrow.Table));
    if (viaApi.numRows !== viaLance.numRows) throw new Error(`query: API ${viaApi.numRows} rows, lancedb ${viaLance.numRows}`);
  }
  const qps = (ms: number) => Math.round(QUERIES / (ms / 1000));
  report(`QueryTable vector search, ${what}, ${ROWS} rows, ${DIM}-d, k=10, ${QUERIES} queries`, [
    { path: 'lancedb table.search(v).limit(10).toArrow() (baseline)', 'ms/query': (lance / QUERIES).toFixed(2), 'queries/s': qps(lance), ratio: '1.00' },
    { path: 'QueryTable through the API (Arrow IPC file)', 'ms/query': (api / QUERIES).toFixed(2), 'queries/s': qps(api), ratio: (api / lance).toFixed(2) },
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
async function hnsw(server: BenchServer, direct: Direct) {
  const rows = HNSW_ROWS;
  const name = 'graph';
  const batches = Array.from({ length: Math.ceil(rows / BATCH) }, (_, i) => vectorTable(i * BATCH, Math.min(BATCH, rows - i * BATCH), DIM));
  const { table: directTable } = await insertBoth(server, direct, name, batches);
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
      const res = await postJson(`${server.url}/v1/table/${name}/query`, { vector: { single_vector: q }, k: 10, ef: 100, columns: { column_names: ['id'] } });
      graphResults.push(ids(arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()))));
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

async function growth(server: BenchServer, direct: Direct) {
  const rows: Array<Record<string, string | number>> = [];
  for (const size of [10_000, 100_000, 1_000_000]) {
    const { api, lance, table } = await insertBoth(server, direct, `growth_${size}`, batchesOf(size));
    table.close();
    rows.push(...insertRows(size, api, lance));
  }
  report(`Insert growth: ${DIM}-d vectors in batches of ${BATCH}, time per row by table size`, rows);
}

async function main(): Promise<void> {
  const server = await startServer();
  const direct = await lancedb.connect(mkdtempSync(join(tmpdir(), 'lance-direct-')));
  try {
    if (GROWTH) return await growth(server, direct);
    const { api, lance, table } = await insertBoth(server, direct, 'bench', batchesOf(ROWS));
    report(`Insert ${ROWS} rows of ${DIM}-d vectors in batches of ${BATCH}`, insertRows(ROWS, api, lance));
    await countBoth(server, table, 'bench');
    await queryBoth(server, table, 'bench', 'no index');
    if (IVF) {
      await ivf(server, table, 'bench');
      await queryBoth(server, table, 'bench', 'IVF_PQ index (16 partitions)');
    }
    table.close();
    if (HNSW_ROWS > 0) await hnsw(server, direct);
  } finally {
    direct.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
