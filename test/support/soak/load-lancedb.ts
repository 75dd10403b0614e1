import * as lancedb from '@lancedb/lancedb';
import { LoadContext, NS, bucketStoppedDuring, sleep } from './context';
import { observingProxy } from './observing-proxy';
import { Outcome } from './observer';

const ROWS = 5;

/**
 * What a lancedb client's failure was. Every answer the catalog gave it went through the observing
 * proxy and was sorted there; the client's own error is "unavailable" when the catalog had just
 * answered it so (the client then gives up, or cannot tell whether its commit applied), when the
 * object store it writes to itself could not be reached (a fault stops it), or when Lance's commit
 * ran out of its time for retries (30 s) while that store was stopped for part of it: Lance then
 * says only "Too many concurrent writers", and its requests to the store are what took the time.
 * Anything else is unexpected.
 */
export function readClientFailure(message: string, sawUnavailableSince: boolean, bucketStopped: boolean): Outcome {
  if (sawUnavailableSince) return 'unavailable';
  if (/Generic S3 error: .*(error sending request|connection refused|tcp connect error)/is.test(message)) return 'unavailable';
  if (bucketStopped && /Too many concurrent writers\. Attempted \d+ times, but failed on retry_timeout/.test(message)) return 'unavailable';
  return 'unexpected';
}

/** The lancedb client appending to its own table through the catalog, reading it back now and then. */
export async function lancedbClient(ctx: LoadContext, name: string): Promise<void> {
  const driver = `lancedb:${name}`;
  const proxy = await observingProxy(ctx.url, ctx.obs, driver);
  const db = await lancedb.connectNamespace('rest', { uri: proxy.url, headers: { 'x-api-key': ctx.apiKey } } as any);
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
      const outcome = readClientFailure(message, proxy.lastUnavailableAt >= startedAt, bucketStoppedDuring(ctx, startedAt, Date.now()));
      ctx.obs.client(driver, i % 3 === 2 ? 'lancedb countRows' : 'lancedb add', outcome, message.slice(0, 600), startedAt);
      // A failed commit may leave the handle behind the catalog: open the table afresh.
      table?.close();
      table = undefined;
      await sleep(200);
    }
    await sleep(50);
  }
  table?.close();
  db.close();
  await proxy.close();
}

/** Creates a lancedb client's table before the load starts. */
export async function createLancedbTable(url: string, apiKey: string, name: string): Promise<void> {
  const db = await lancedb.connectNamespace('rest', { uri: url, headers: { 'x-api-key': apiKey } } as any);
  const t = await db.createTable(name, [{ id: -1, vector: [0, 1] }], [NS]);
  t.close();
  db.close();
}
