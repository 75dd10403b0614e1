import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { finalManifestName, storePathOf } from '@app/catalog';
import { NewEvent } from '@app/event-store';
import { benchEventStore } from './event-stores';
import { report } from './support';

/**
 * Memory follows what is live, not the deployment's age. Two logs of the same live catalog:
 *  - aged: BENCH_COMMITS version commits (default 1,000,000) over BENCH_TABLES tables (100), spread
 *    over BENCH_DAYS days (30), each a transaction of its own, with a retention of BENCH_KEEP
 *    versions (20) per table applied as maintenance does (a TableVersionsDeleted every BENCH_KEEP
 *    commits of a table);
 *  - fresh: the same tables holding the same live versions, written once, no history.
 * For each: an API process from start to its first answer (folding the log), its resident memory,
 * then BENCH_STARTS (5) starts from the snapshot the first one left (their median); the aged log's figures over the fresh
 * one's. The servers keep finished transactions in memory for TRANSACTION_MEMORY_SECONDS (default
 * a day).
 */
const COMMITS = Number(process.env.BENCH_COMMITS ?? 1_000_000);
const TABLES = Number(process.env.BENCH_TABLES ?? 100);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const KEEP = Number(process.env.BENCH_KEEP ?? 20);
/** Starts from the snapshot per log: one start's time swings by tenths of a second on shared cores, so the median of several. */
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);
const location = (t: number) => `/warehouse/default/ns/t${t}.lance`;

/** Writes one log; answers the number of events. `aged`: every commit and its expiries, else the live versions alone. */
async function writeLog(open: () => ReturnType<Awaited<ReturnType<typeof benchEventStore>>['open']>, aged: boolean): Promise<number> {
  const store = open();
  let revision = -1;
  let events = 0;
  const end = Date.now();
  const begin = end - DAYS * 86_400_000;
  const batch: NewEvent[] = [];
  const flush = async () => {
    if (!batch.length) return;
    const r = await store.append('catalog-default', batch.splice(0), revision === -1 ? 'no_stream' : revision);
    events += r.nextExpectedRevision - revision;
    revision = r.nextExpectedRevision;
  };
  const push = async (type: string, data: unknown, operation: string, at: number) => {
    batch.push({ type, data, metadata: { transactionId: randomUUID(), operation, occurredAt: new Date(at).toISOString() } });
    if (batch.length >= 5000) await flush();
  };
  await push('NamespaceCreated', { namespace: ['ns'], properties: {} }, 'CreateNamespace', begin);
  for (let t = 0; t < TABLES; t++) {
    await push('TableDeclared', { table: ['ns', `t${t}`], tableUuid: `u${t}`, location: location(t), properties: {}, managedVersioning: true }, 'DeclareTable', begin);
  }
  const perTable = Math.floor(COMMITS / TABLES);
  const commit = (t: number, version: number, at: number) =>
    push(
      'TableVersionCreated',
      { table: ['ns', `t${t}`], tableUuid: `u${t}`, version, manifestPath: `${storePathOf(location(t))}/_versions/${finalManifestName(version, 'V2')}`, namingScheme: 'V2', timestampMillis: at, manifestSize: 512 },
      'CreateTableVersion',
      at,
    );
  if (aged) {
    for (let i = 0; i < perTable * TABLES; i++) {
      const t = i % TABLES;
      const version = Math.floor(i / TABLES) + 1;
      const at = begin + Math.floor((i / (perTable * TABLES)) * (end - begin));
      await commit(t, version, at);
      if (version > KEEP && version % KEEP === 0) {
        const versions = Array.from({ length: KEEP }, (_, k) => version - 2 * KEEP + 1 + k).filter((v) => v >= 1);
        await push('TableVersionsDeleted', { table: ['ns', `t${t}`], tableUuid: `u${t}`, versions, reason: 'expired' }, 'ExpireTableVersions', at);
      }
    }
  } else {
    // The versions the aged log leaves live: the last KEEP to 2*KEEP-1 of each table.
    const lastExpired = perTable - (perTable % KEEP) - KEEP;
    for (let t = 0; t < TABLES; t++) for (let v = Math.max(1, lastExpired + 1); v <= perTable; v++) await commit(t, v, end);
  }
  await flush();
  await store.close();
  return events;
}

async function start(env: Record<string, string>): Promise<{ readyMs: number; rssMb: number; version: number }> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/api/src/main.js')], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ACCESS_LOG: 'off', QUEUE_PREFIX: `bench-live-${Date.now()}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((ok, fail) => {
    const onData = (d: Buffer) => {
      output += d;
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (m) ok(m[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => fail(new Error(`server exited ${code}: ${output}`)));
  });
  const res = await fetch(`${url}/v1/table/ns%24t${TABLES - 1}/describe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const body = (await res.json()) as { version: number };
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  const { stdout } = await run('ps', ['-o', 'rss=', '-p', String(child.pid)]);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return { readyMs, rssMb: Number(stdout.trim()) / 1024, version: body.version };
}

function median<T>(items: T[], by: (item: T) => number): T {
  return [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)];
}

async function main(): Promise<void> {
  const rows: Array<Record<string, string | number>> = [];
  const results: Record<string, { events: number; cold: Awaited<ReturnType<typeof start>>; warm: Awaited<ReturnType<typeof start>> }> = {};
  for (const kind of ['fresh', 'aged'] as const) {
    const target = await benchEventStore(`live-${kind}`);
    try {
      const events = await writeLog(() => target.open(), kind === 'aged');
      const env = { DATA_DIR: target.env.DATA_DIR ?? '', ...target.env };
      const cold = await start(env);
      const starts: Array<Awaited<ReturnType<typeof start>>> = [];
      for (let i = 0; i < STARTS; i++) starts.push(await start(env));
      const warm = { ...median(starts, (s) => s.readyMs), rssMb: median(starts, (s) => s.rssMb).rssMb };
      for (const s of starts) if (s.version !== cold.version) throw new Error(`${kind}: version ${cold.version}, then ${s.version}`);
      results[kind] = { events, cold, warm };
    } finally {
      await target.drop();
    }
  }
  const { fresh, aged } = results;
  if (fresh.cold.version !== aged.cold.version) throw new Error(`the logs end at different versions: ${fresh.cold.version} and ${aged.cold.version}`);
  const row = (measure: string, f: number, a: number, unit: string) => ({ measure, 'fresh (baseline)': `${f.toFixed(unit === 'MB' ? 0 : 2)} ${unit}`, aged: `${a.toFixed(unit === 'MB' ? 0 : 2)} ${unit}`, ratio: (a / f).toFixed(2) });
  rows.push(
    row('time to first answer, folding the log', fresh.cold.readyMs / 1000, aged.cold.readyMs / 1000, 's'),
    row('resident memory, after folding the log', fresh.cold.rssMb, aged.cold.rssMb, 'MB'),
    row(`time to first answer, from the snapshot (median of ${STARTS})`, fresh.warm.readyMs / 1000, aged.warm.readyMs / 1000, 's'),
    row(`resident memory, from the snapshot (median of ${STARTS})`, fresh.warm.rssMb, aged.warm.rssMb, 'MB'),
  );
  report(`Memory by what is live: ${aged.events} events (${COMMITS} commits over ${DAYS} days, ${TABLES} tables, ${KEEP} versions kept each) vs ${fresh.events} events of the same live catalog`, rows);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
