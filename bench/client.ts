import * as lancedb from '@lancedb/lancedb';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { report, startServer, timed, vectorTable } from './support';

/**
 * The real client's workload through this catalog (managed versioning: every commit is a
 * `version/create`) against lancedb's own `dir` namespace on local files: create BENCH_CLIENT_TABLES
 * tables, BENCH_CLIENT_APPENDS appends to each, then open, count and search each table.
 */
const TABLES = Number(process.env.BENCH_CLIENT_TABLES ?? 20);
const APPENDS = Number(process.env.BENCH_CLIENT_APPENDS ?? 50);
const ROWS = Number(process.env.BENCH_CLIENT_ROWS ?? 100);
const DIM = 16;

async function workload(db: lancedb.Connection, namespace: string[], tables = TABLES, appends = APPENDS): Promise<number> {
  for (let t = 0; t < tables; t++) {
    const table = await db.createTable(`t${t}`, vectorTable(0, ROWS, DIM, t), namespace);
    for (let a = 1; a <= appends; a++) await table.add(vectorTable(a * ROWS, ROWS, DIM, t));
    table.close();
  }
  let rows = 0;
  for (let t = 0; t < tables; t++) {
    const table = await db.openTable(`t${t}`, namespace);
    rows += await table.countRows();
    const hits = await table.search(Array.from({ length: DIM }, () => 0.5)).limit(10).toArray();
    if (hits.length !== 10) throw new Error(`search on t${t} found ${hits.length} rows`);
    table.close();
  }
  return rows;
}

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const dir = await lancedb.connectNamespace('dir', { root: mkdtempSync(join(tmpdir(), 'bench-dir-')) });
    const rest = await lancedb.connectNamespace('rest', { uri: server.url });
    // Untimed: a small run on each side first, so neither is measured warming up.
    await workload(await lancedb.connectNamespace('dir', { root: mkdtempSync(join(tmpdir(), 'bench-dir-')) }), [], 2, 10);
    await rest.createNamespace(['warm']);
    await workload(rest, ['warm'], 2, 10);
    const viaDir = await timed(() => workload(dir, []));
    await rest.createNamespace(['bench']);
    const viaCatalog = await timed(() => workload(rest, ['bench']));
    if (viaDir.value !== viaCatalog.value) throw new Error(`row counts differ: ${viaDir.value} vs ${viaCatalog.value}`);
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
