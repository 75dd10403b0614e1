import * as lancedb from '@lancedb/lancedb';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { HierarchicalNSW } from 'hnswlib-node';
import { post, postArrow, report, settle, startServer, timed, vectorTable } from './support';

/**
 * Data-plane benchmarks, each measured side by side with its baseline in the same run:
 *  1. insert rows/s through the API vs `table.add` directly;
 *  2. index build time through the queue vs a direct `createIndex`;
 *  3. HNSW (hnswlib-node) vs IVF_HNSW_SQ: recall@10 and queries/s on the same data.
 * Sizes come from the environment (BENCH_ROWS, BENCH_DIM, BENCH_BATCH, BENCH_QUERIES).
 */
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const DIM = Number(process.env.BENCH_DIM ?? 64);
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);

async function main(): Promise<void> {
  const server = await startServer();
  const direct = await lancedb.connect(mkdtempSync(join(tmpdir(), 'lance-direct-')));
  try {
    // 1. Inserts.
    const batches = Array.from({ length: ROWS / BATCH }, (_, i) => vectorTable(i * BATCH, BATCH, DIM));
    const viaApi = await timed(async () => {
      await postArrow(`${server.url}/v1/table/bench/create`, batches[0]);
      for (const b of batches.slice(1)) await postArrow(`${server.url}/v1/table/bench/insert`, b);
    });
    const viaLance = await timed(async () => {
      const t = await direct.createTable('bench', batches[0]);
      for (const b of batches.slice(1)) await t.add(b);
      t.close();
    });
    report(`Insert ${ROWS} rows of ${DIM}-d vectors in batches of ${BATCH}`, [
      { path: 'lancedb table.add (baseline)', ms: viaLance.ms.toFixed(0), 'rows/s': Math.round(ROWS / (viaLance.ms / 1000)), ratio: '1.00' },
      { path: 'InsertIntoTable through the API', ms: viaApi.ms.toFixed(0), 'rows/s': Math.round(ROWS / (viaApi.ms / 1000)), ratio: (viaApi.ms / viaLance.ms).toFixed(2) },
    ]);

    // 2. Index builds.
    const options = { column: 'vector', index_type: 'IVF_PQ', num_partitions: 16, num_sub_vectors: DIM / 8 };
    const queued = await timed(async () => {
      const { transaction_id } = await post(`${server.url}/v1/table/bench/create_index`, { ...options, name: 'pq' });
      const tx = await settle(server.url, transaction_id);
      if (tx.status !== 'Succeeded') throw new Error(JSON.stringify(tx));
    });
    const directTable = await direct.openTable('bench');
    const directBuild = await timed(() =>
      directTable.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: 16, numSubVectors: DIM / 8 }), name: 'pq' }),
    );
    report('IVF_PQ index build', [
      { path: 'direct createIndex (baseline)', ms: directBuild.ms.toFixed(0), ratio: '1.00' },
      { path: 'CreateTableIndex through the queue, until Succeeded', ms: queued.ms.toFixed(0), ratio: (queued.ms / directBuild.ms).toFixed(2) },
    ]);

    // 3. HNSW vs IVF_HNSW_SQ, recall against exact search.
    const hnswBuild = await timed(async () => {
      const { transaction_id } = await post(`${server.url}/v1/table/bench/create_index`, { column: 'vector', index_type: 'HNSW', name: 'graph', m: 16, ef_construction: 200 });
      return settle(server.url, transaction_id);
    });
    const sqBuild = await timed(() =>
      directTable.createIndex('vector', { config: lancedb.Index.hnswSq({ numPartitions: 1 }), name: 'sq', replace: true }),
    );
    const queries = Array.from({ length: QUERIES }, (_, i) => Array.from(vectorTable(0, 1, DIM, 1000 + i).getChild('vector')!.get(0) as Float32Array));
    const ids = (t: arrow.Table) => t.toArray().map((r) => r.id as number);
    const truth: number[][] = [];
    for (const q of queries) truth.push(ids((await directTable.query().nearestTo(q).bypassVectorIndex().limit(10).select(['id']).toArrow()) as unknown as arrow.Table));
    const recall = (got: number[][]) => got.reduce((n, g, i) => n + g.filter((x) => truth[i].includes(x)).length, 0) / (10 * got.length);

    const graphResults: number[][] = [];
    const graphTime = await timed(async () => {
      for (const q of queries) {
        const res = await fetch(`${server.url}/v1/table/bench/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ vector: { single_vector: q }, k: 10, ef: 100, columns: { column_names: ['id'] } }),
        });
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
    report(`Vector search, ${ROWS} rows, ${DIM}-d, k=10, ef=100, ${QUERIES} queries (recall against exact search)`, [
      { index: 'IVF_HNSW_SQ, direct lancedb (baseline)', 'build ms': sqBuild.ms.toFixed(0), 'recall@10': recall(sqResults).toFixed(3), 'queries/s': qps(sqTime.ms), 'qps ratio': '1.00' },
      { index: 'HNSW through QueryTable (HTTP, worker-built)', 'build ms': hnswBuild.ms.toFixed(0), 'recall@10': recall(graphResults).toFixed(3), 'queries/s': qps(graphTime.ms), 'qps ratio': (qps(graphTime.ms) / qps(sqTime.ms)).toFixed(2) },
      { index: 'hnswlib-node graph alone, in process', 'build ms': rawBuild.ms.toFixed(0), 'recall@10': recall(rawResults).toFixed(3), 'queries/s': qps(rawTime.ms), 'qps ratio': (qps(rawTime.ms) / qps(sqTime.ms)).toFixed(2) },
    ]);
  } finally {
    direct.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
