import * as lancedb from '@lancedb/lancedb';
import { report, scratchDir, startServer, timed, vectorTable } from './support';

/**
 * The real client's workload through this catalog (managed versioning: every commit is a
 * `version/create`) against lancedb's own `dir` namespace on local files: create BENCH_CLIENT_TABLES
 * tables, BENCH_CLIENT_APPENDS appends to each, then open, count and search each table. The two
 * sides take turns table by table and each side's steps are timed apart.
 */
const TABLES = Number(process.env.BENCH_CLIENT_TABLES ?? 20);
const APPENDS = Number(process.env.BENCH_CLIENT_APPENDS ?? 50);
const ROWS = Number(process.env.BENCH_CLIENT_ROWS ?? 100);
const DIM = 16;

type Side = { db: lancedb.Connection; namespace: string[]; ms: number; rows: number };

/** Times one step on one side, adding to that side's total. */
async function step(side: Side, work: () => Promise<void>): Promise<void> {
  side.ms += (await timed(work)).ms;
}

/**
 * The workload on both sides, table by table in turn, so that load from elsewhere on the machine
 * falls on both alike: create a table and append to it, then open, count and search it.
 */
async function workload(sides: Side[], tables = TABLES, appends = APPENDS): Promise<void> {
  for (let t = 0; t < tables; t++) {
    for (const side of sides) {
      await step(side, async () => {
        const table = await side.db.createTable(`t${t}`, vectorTable(0, ROWS, DIM, t), side.namespace);
        for (let a = 1; a <= appends; a++) await table.add(vectorTable(a * ROWS, ROWS, DIM, t));
        table.close();
      });
    }
  }
  for (let t = 0; t < tables; t++) {
    for (const side of sides) {
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

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const rest = await lancedb.connectNamespace('rest', { uri: server.url });
    const dirSide = async (): Promise<Side> => ({ db: await lancedb.connectNamespace('dir', { root: scratchDir('bench-dir-') }), namespace: [], ms: 0, rows: 0 });
    // Untimed: a smaller run on each side first, so neither is measured warming up.
    await rest.createNamespace(['warm']);
    await workload([await dirSide(), { db: rest, namespace: ['warm'], ms: 0, rows: 0 }], 4, 20);
    await rest.createNamespace(['bench']);
    const viaDir = await dirSide();
    const viaCatalog: Side = { db: rest, namespace: ['bench'], ms: 0, rows: 0 };
    await workload([viaDir, viaCatalog]);
    if (viaDir.rows !== viaCatalog.rows) throw new Error(`row counts differ: ${viaDir.rows} vs ${viaCatalog.rows}`);
    const ops = TABLES * (APPENDS + 3);
    report(`The lancedb client: ${TABLES} tables x ${APPENDS} appends of ${ROWS} rows, then open, count, search`, [
      { path: "lancedb's own dir namespace (baseline)", ms: viaDir.ms.toFixed(0), 'ops/s': Math.round(ops / (viaDir.ms / 1000)), ratio: '1.00' },
      { path: 'this catalog, managed versioning', ms: viaCatalog.ms.toFixed(0), 'ops/s': Math.round(ops / (viaCatalog.ms / 1000)), ratio: (viaCatalog.ms / viaDir.ms).toFixed(2) },
    ]);
  } finally {
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
