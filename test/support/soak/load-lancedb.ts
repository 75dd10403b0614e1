import * as lancedb from '@lancedb/lancedb';
import { LoadContext, NS, sleep } from './context';
import { Outcome } from './observer';

const ROWS = 5;

/**
 * What a lancedb client's failure was. The client gives no HTTP answer, only its message. Its REST
 * namespace turns the catalog's code 17 into "Namespace error: Service unavailable: <the
 * catalog's message>" (and gives the status of an answer it cannot parse, which is unexpected);
 * the object store being unreachable is "unavailable" too (the client writes table files there
 * itself, and a fault stops it). Anything else is unexpected.
 */
export function readClientFailure(message: string): Outcome {
  if (/status=\d{3}/.test(message)) return 'unexpected';
  if (/Namespace error: Service unavailable: /.test(message)) return 'unavailable';
  if (/Generic S3 error: .*(error sending request|connection refused|tcp connect error)/is.test(message)) return 'unavailable';
  return 'unexpected';
}

/** The lancedb client appending to its own table through the catalog, reading it back now and then. */
export async function lancedbClient(ctx: LoadContext, name: string): Promise<void> {
  const driver = `lancedb:${name}`;
  const db = await lancedb.connectNamespace('rest', { uri: ctx.url, headers: { 'x-api-key': ctx.apiKey } } as any);
  let table: lancedb.Table | undefined;
  let written = 0;
  const rows = (from: number) => Array.from({ length: ROWS }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));
  for (let i = 0; ctx.running(); i++) {
    const startedAt = Date.now();
    try {
      table ??= await db.openTable(name, [NS]);
      if (i % 3 === 2) {
        await table.countRows();
        ctx.obs.client(driver, 'lancedb countRows', 'success', '', startedAt);
      } else {
        ctx.ledger.tried(name, ROWS);
        await table.add(rows(written));
        written += ROWS;
        // The version the append made is what the client knows of it once it returned.
        const version = await table.version();
        ctx.ledger.versions.push({ table: name, key: ctx.keys.get(name)!, version, rows: ROWS });
        ctx.obs.ack();
        ctx.obs.client(driver, 'lancedb add', 'success', '', startedAt);
      }
    } catch (e) {
      const message = String((e as Error)?.message ?? e);
      ctx.obs.client(driver, i % 3 === 2 ? 'lancedb countRows' : 'lancedb add', readClientFailure(message), message.slice(0, 600), startedAt);
      // A failed commit may leave the handle behind the catalog: open the table afresh.
      table?.close();
      table = undefined;
      await sleep(200);
    }
    await sleep(50);
  }
  table?.close();
  db.close();
}

/** Creates a lancedb client's table before the load starts. */
export async function createLancedbTable(url: string, apiKey: string, name: string): Promise<void> {
  const db = await lancedb.connectNamespace('rest', { uri: url, headers: { 'x-api-key': apiKey } } as any);
  const t = await db.createTable(name, [{ id: -1, vector: [0, 1] }], [NS]);
  t.close();
  db.close();
}
