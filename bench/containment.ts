import * as arrow from 'apache-arrow';
import * as lancedb from '@lancedb/lancedb';
import { BenchServer, closeClient, post, postArrow, postForBytes, report, scratchDir, settle, startServer, timed, vectorTable } from './support';

/**
 * What running the data plane in processes of its own costs (DATA_PLANE_PROCESSES, the default 2)
 * against running it in the API's own process (DATA_PLANE_PROCESSES=0), with lancedb on a local
 * directory as the baseline of both, in the same run: InsertIntoTable, CountTableRows and QueryTable
 * (without an index, and with IVF_PQ). The three sides take turns call by call, so a burst of load
 * from elsewhere lands on all of them.
 */
const ROWS = Number(process.env.BENCH_ROWS ?? 200_000);
const DIM = Number(process.env.BENCH_DIM ?? 64);
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const WARM_UP = 20;

interface Side {
  name: string;
  server?: BenchServer;
  ms: Record<string, number>;
}

const elapsed = async (work: () => Promise<unknown>) => (await timed(work)).ms;

async function main(): Promise<void> {
  const contained = await startServer();
  const inProcess = await startServer({ DATA_PLANE_PROCESSES: '0' });
  const root = scratchDir('lance-direct-');
  const direct = await lancedb.connect(root);
  const sides: Side[] = [
    { name: 'lancedb on a local directory (baseline)', ms: {} },
    { name: 'this catalog, data plane in the API process (DATA_PLANE_PROCESSES=0)', server: inProcess, ms: {} },
    { name: 'this catalog, data plane in processes of its own (DATA_PLANE_PROCESSES=2)', server: contained, ms: {} },
  ];
  const add = (side: Side, what: string, ms: number) => (side.ms[what] = (side.ms[what] ?? 0) + ms);
  try {
    const batches = Array.from({ length: Math.ceil(ROWS / BATCH) }, (_, i) => vectorTable(i * BATCH, Math.min(BATCH, ROWS - i * BATCH), DIM));
    let table!: lancedb.Table;
    for (const [i, batch] of batches.entries()) {
      // The first batch creates the table on every side; it is not timed.
      for (const side of sides) {
        const ms = side.server
          ? await elapsed(() => postArrow(`${side.server!.url}/v1/table/bench/${i === 0 ? 'create' : 'insert'}`, batch))
          : await elapsed(async () => (i === 0 ? (table = await direct.createTable('bench', batch)) : table.add(batch)));
        if (i > 0) add(side, 'insert', ms);
      }
    }
    const count = (side: Side, predicate: string) =>
      side.server ? postForBytes(`${side.server.url}/v1/table/bench/count_rows`, { predicate }).then((b) => Number(b.toString())) : table.countRows(predicate);
    const query = (side: Side, v: number[]) =>
      side.server
        ? postForBytes(`${side.server.url}/v1/table/bench/query`, { vector: { single_vector: v }, k: 10 }).then((b) => arrow.tableFromIPC(b).numRows)
        : table.search(v).limit(10).toArrow().then((t) => t.numRows);
    const vectors = Array.from({ length: CALLS + WARM_UP }, (_, i) => Array.from(vectorTable(0, 1, DIM, 1000 + i).getChild('vector')!.get(0) as Float32Array));
    const turns = async (what: string, call: (side: Side, i: number) => Promise<number>) => {
      for (let i = 0; i < CALLS + WARM_UP; i++) {
        const answers = new Set<number>();
        for (const side of sides) {
          let answer = 0;
          const ms = await elapsed(async () => (answer = await call(side, i)));
          answers.add(answer);
          if (i >= WARM_UP) add(side, what, ms);
        }
        if (answers.size !== 1) throw new Error(`${what}: the sides answered ${[...answers].join(', ')}`);
      }
    };
    await turns('count', (side, i) => count(side, `id > ${(i * 7919) % ROWS}`));
    await turns('query without an index', (side, i) => query(side, vectors[i]));
    for (const side of sides) {
      if (!side.server) await table.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: 16, numSubVectors: DIM / 8 }) });
      else {
        const { transaction_id } = await post(`${side.server.url}/v1/table/bench/create_index`, { column: 'vector', index_type: 'IVF_PQ', num_partitions: 16, num_sub_vectors: DIM / 8 });
        if ((await settle(side.server.url, transaction_id)).status !== 'Succeeded') throw new Error('the IVF_PQ build failed');
      }
    }
    await turns('query with IVF_PQ', (side, i) => query(side, vectors[i]));
    const per = { insert: batches.length - 1, count: CALLS, 'query without an index': CALLS, 'query with IVF_PQ': CALLS };
    const [baseline, before, after] = sides;
    report(
      `Containment: ${ROWS} rows of ${DIM}-d vectors, inserts of ${BATCH} rows, ${CALLS} counts and queries per kind`,
      Object.entries(per).map(([what, n]) => ({
        call: what,
        'lancedb ms': (baseline.ms[what] / n).toFixed(2),
        'in-process ms': (before.ms[what] / n).toFixed(2),
        'contained ms': (after.ms[what] / n).toFixed(2),
        'in-process ratio': (before.ms[what] / baseline.ms[what]).toFixed(3),
        'contained ratio': (after.ms[what] / baseline.ms[what]).toFixed(3),
        'contained / in-process': (after.ms[what] / before.ms[what]).toFixed(3),
      })),
    );
  } finally {
    direct.close();
    closeClient();
    await contained.stop();
    await inProcess.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
