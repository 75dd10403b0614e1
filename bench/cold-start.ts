import { execFile, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { finalManifestName, versionsDirOf } from '@app/catalog';
import { NewEvent } from '@app/event-store';
import { BenchEventStore, benchEventStore } from './event-stores';
import { report, scratchDir, timed } from './support';

/**
 * Cold start, replay and memory with a large log: BENCH_TABLES tables (default 100,000) declared
 * and BENCH_EVENTS events in all (default 1,000,000), the rest version commits spread over the
 * tables, each event its own transaction as real commits are. Measured:
 *  - replay (`npm run replay`) events/s, against reading the same events without folding them;
 *  - an API process from start to its first answer about a table (it folds the whole log first);
 *  - that process's resident memory once it holds the whole catalog;
 *  - a second start, from the snapshot the first one left.
 * With BENCH_GROWTH=1 it runs at 10,000, 100,000 and 1,000,000 events (tables = events / 10) and
 * adds one table of how each figure grows with the log.
 */
const TABLES = Number(process.env.BENCH_TABLES ?? 100_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const GROWTH = process.env.BENCH_GROWTH === '1';
const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

async function writeLog(target: BenchEventStore, EVENTS: number, TABLES: number): Promise<void> {
  const store = target.open();
  const stream = 'catalog-default';
  let revision = -1;
  let written = 0;
  const meta = (operation: string) => ({ transactionId: randomUUID(), operation, occurredAt: new Date().toISOString() });
  const flush = async (batch: NewEvent[]) => {
    const r = await store.append(stream, batch, revision === -1 ? 'no_stream' : revision);
    revision = r.nextExpectedRevision;
    written += batch.length;
  };
  let batch: NewEvent[] = [{ type: 'NamespaceCreated', data: { namespace: ['ns'], properties: {} }, metadata: meta('CreateNamespace') }];
  const location = (t: number) => `/warehouse/default/ns/t${t}.lance`;
  for (let t = 0; t < TABLES; t++) {
    batch.push({
      type: 'TableDeclared',
      data: { table: ['ns', `t${t}`], tableUuid: `u${t}`, location: location(t), properties: {}, managedVersioning: true },
      metadata: meta('DeclareTable'),
    });
    if (batch.length >= 5000) await flush(batch.splice(0));
  }
  const versions = EVENTS - 1 - TABLES;
  for (let i = 0; i < versions; i++) {
    const t = i % TABLES;
    const version = Math.floor(i / TABLES) + 1;
    // The record a real commit gets: the final V2 manifest name, fields in decideCreateTableVersion's order.
    const manifestPath = versionsDirOf(location(t)) + finalManifestName(version, 'V2');
    batch.push({
      type: 'TableVersionCreated',
      data: { table: ['ns', `t${t}`], tableUuid: `u${t}`, version, manifestPath, namingScheme: 'V2', timestampMillis: Date.now(), manifestSize: 512 },
      metadata: meta('CreateTableVersion'),
    });
    if (batch.length >= 5000) await flush(batch.splice(0));
  }
  if (batch.length) await flush(batch);
  await store.close();
  if (written !== EVENTS) throw new Error(`wrote ${written} events, expected ${EVENTS}`);
}

async function readOnly(target: BenchEventStore): Promise<number> {
  const store = target.open();
  let after: bigint | undefined;
  let n = 0;
  for (;;) {
    const batch = await store.readAll({ afterPosition: after, maxCount: 10_000 });
    n += batch.length;
    if (batch.length < 10_000) break;
    after = batch[batch.length - 1].position;
  }
  await store.close();
  return n;
}

interface ColdStart {
  listeningMs: number;
  answeredMs: number;
  rssMb: number;
  /** The server's own lines about snapshots (written: size and longest event-loop steps; restored). */
  snapshotLines: string[];
}

async function coldStart(dataDir: string, target: BenchEventStore, TABLES: number): Promise<ColdStart> {
  const started = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - started) / 1e6;
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/api/src/main.js')], {
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'info', QUEUE_PREFIX: `bench-cold-${Date.now()}`, ...target.env },
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
  const listeningMs = ms();
  const res = await fetch(`${url}/v1/table/ns%24t${TABLES - 1}/describe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  if (res.status !== 200) throw new Error(`describe answered ${res.status}: ${await res.text()}`);
  const answeredMs = ms();
  const { stdout } = await run('ps', ['-o', 'rss=', '-p', String(child.pid)]);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const snapshotLines = output
    .split('\n')
    .filter((l) => l.includes('"Snapshots"'))
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { listeningMs, answeredMs, rssMb: Number(stdout.trim()) / 1024, snapshotLines };
}

interface SizeResult {
  events: number;
  tables: number;
  replayPerSecond: number;
  cold: ColdStart;
  warm: ColdStart;
}

async function runSize(EVENTS: number, TABLES: number): Promise<SizeResult> {
  const target = await benchEventStore('cold');
  // The server's own directory: the embedded store's file, or (PostgreSQL) only its snapshots.
  const dataDir = target.env.DATA_DIR ?? scratchDir('bench-cold-');
  try {
    const written = await timed(() => writeLog(target, EVENTS, TABLES));
    console.log(`wrote ${EVENTS} events (${TABLES} tables) in ${(written.ms / 1000).toFixed(1)} s`);

    const read = await timed(() => readOnly(target));
    const replay = await timed(() =>
      run(process.execPath, [join(ROOT, 'dist/apps/api/src/replay.js')], { env: { ...process.env, DATA_DIR: dataDir, ...target.env }, maxBuffer: 1 << 24 }),
    );
    const replayed = JSON.parse(replay.value.stdout) as { events: number; events_per_second: number };
    report(`Replay of ${EVENTS} events, ${target.kind} event store`, [
      { path: 'read the events, no folding (baseline)', s: (read.ms / 1000).toFixed(1), 'events/s': Math.round(read.value / (read.ms / 1000)), ratio: '1.00' },
      { path: 'npm run replay: fold every event (in-process rate)', s: (replayed.events / replayed.events_per_second).toFixed(1), 'events/s': replayed.events_per_second, ratio: (read.value / (read.ms / 1000) / replayed.events_per_second).toFixed(2) },
      { path: 'npm run replay: whole process', s: (replay.ms / 1000).toFixed(1), 'events/s': Math.round(EVENTS / (replay.ms / 1000)), ratio: (replay.ms / read.ms).toFixed(2) },
    ]);

    // The first start finds no snapshot and folds the whole log; it leaves a snapshot (written after
    // the fold, or at the latest when it stops), which the second start loads.
    const cold = await coldStart(dataDir, target, TABLES);
    const warm = await coldStart(dataDir, target, TABLES);
    report(`Cold start with ${EVENTS} events, ${TABLES} tables, ${target.kind} event store`, [
      { measure: 'process start to listening', value: `${(cold.listeningMs / 1000).toFixed(1)} s` },
      { measure: 'process start to first DescribeTable answered (whole log folded)', value: `${(cold.answeredMs / 1000).toFixed(1)} s` },
      { measure: 'resident memory holding the whole catalog', value: `${cold.rssMb.toFixed(0)} MB` },
      { measure: 'process start to first DescribeTable answered (from the snapshot)', value: `${(warm.answeredMs / 1000).toFixed(1)} s` },
      { measure: 'resident memory, started from the snapshot', value: `${warm.rssMb.toFixed(0)} MB` },
    ]);
    for (const line of [...cold.snapshotLines, ...warm.snapshotLines]) console.log(`snapshots: ${line}`);
    return { events: EVENTS, tables: TABLES, replayPerSecond: replayed.events_per_second, cold, warm };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    await target.drop();
  }
}

async function main(): Promise<void> {
  if (!GROWTH) {
    await runSize(EVENTS, TABLES);
    return;
  }
  const results: SizeResult[] = [];
  for (const events of [10_000, 100_000, 1_000_000]) results.push(await runSize(events, events / 10));
  report('Growth of replay and cold start with the log', results.map((r) => ({
    events: r.events,
    tables: r.tables,
    'replay events/s': r.replayPerSecond,
    'replay µs/event': (1e6 / r.replayPerSecond).toFixed(1),
    'ready s': (r.cold.answeredMs / 1000).toFixed(2),
    'ready µs/event': ((r.cold.answeredMs * 1000) / r.events).toFixed(1),
    'ready from snapshot s': (r.warm.answeredMs / 1000).toFixed(2),
    'RSS MB': Math.round(r.cold.rssMb),
  })));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
