import * as arrow from 'apache-arrow';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { appendFileSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { finalManifestName } from '@app/catalog';

const ROOT = resolve(__dirname, '../..');

export interface BenchServer {
  url: string;
  dataDir: string;
  /** The server's process id, for attaching a profiler (perf record -p). */
  pid: number;
  stop(): Promise<void>;
}

const scratch: string[] = [];
process.once('exit', () => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh directory under the system's temporary one, removed when the process exits (a run of
 * every benchmark writes about 10 GB); BENCH_KEEP=1 keeps them for a look afterwards.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (process.env.BENCH_KEEP !== '1') scratch.push(dir);
  return dir;
}

/**
 * Starts the compiled server (API and worker in one process) on a free port in a fresh data dir.
 * Its log goes to a file in that dir, as a deployment's would: read back through a pipe, every
 * request's line would cost this process (which also runs the load generator) CPU. `entry` is
 * the script it runs, relative to the repository: the server's own unless a bench says otherwise.
 */
export async function startServer(env: Record<string, string> = {}, entry = 'dist/apps/api/src/standalone.js'): Promise<BenchServer> {
  const dataDir = scratchDir('lance-bench-');
  const started = await startProcess(entry, { PORT: '0', DATA_DIR: dataDir, QUEUE_PREFIX: `bench-${Date.now()}`, ...env }, join(dataDir, 'server.log'), /listening on (http:\/\/[\d.]+:\d+)/);
  return { url: started.match[1], dataDir, pid: started.pid, stop: started.stop };
}

/**
 * The API and a worker in processes of their own on one data dir, as README's separate roles run:
 * the API process answers the catalog calls; the worker runs the jobs (the maintenance planner's
 * compactions among them), so what each costs is measured apart.
 */
export async function startApiAndWorker(env: Record<string, string> = {}): Promise<BenchServer & { worker: { pid: number } }> {
  const shared = { AUTH_SERVICE_KEY: randomBytes(32).toString('hex'), QUEUE_PREFIX: `bench-${Date.now()}`, ...env };
  const api = await startServer(shared, 'dist/apps/api/src/main.js');
  const worker = await startProcess('dist/apps/worker/src/main.js', { DATA_DIR: api.dataDir, CATALOG_URL: api.url, ...shared }, join(api.dataDir, 'worker.log'), /worker started/);
  return { ...api, worker: { pid: worker.pid }, stop: async () => void (await Promise.all([worker.stop(), api.stop()])) };
}

/** Runs a compiled entry with its log in `logFile` until the log shows `ready`. */
async function startProcess(entry: string, env: Record<string, string>, logFile: string, ready: RegExp): Promise<{ pid: number; match: RegExpExecArray; stop: () => Promise<void> }> {
  const log = openSync(logFile, 'a');
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, join(ROOT, entry)], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  let match: RegExpExecArray | null = null;
  for (let waited = 0; !match; waited += 50) {
    const output = readFileSync(logFile, 'utf8');
    match = ready.exec(output);
    if (match) break;
    if (exited !== undefined || waited > 120_000) throw new Error(`${entry} ${exited === undefined ? 'did not start' : `exited ${exited}`}: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    pid: child.pid!,
    match,
    stop: () =>
      new Promise<void>((done) => {
        if (exited !== undefined) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** The bare Fastify server of bench/bare-server.ts, in a process of its own: the baselines' server. */
export function startBareServer(): Promise<{ url: string; pid: number; stop: () => void }> {
  return startScript('bare-server.js');
}

/**
 * The minimal catalog of bench/floor-catalog.ts on a warehouse of its own: the benches' floor.
 * `journaled` makes each manifest durable with its version, as this catalog does; `record-only` the version alone.
 */
export function startFloorCatalog(manifests: 'journaled' | 'record-only' = 'journaled', warehouse?: string): Promise<{ url: string; pid: number; stop: () => void }> {
  if (warehouse) return startScript('floor-catalog.js', warehouse, manifests, scratchDir('bench-floor-'));
  return startScript('floor-catalog.js', scratchDir('bench-floor-'), manifests);
}

function startScript(script: string, ...args: string[]): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [join(__dirname, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok) => {
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening on (\S+)/.exec(String(d));
      if (m) ok({ url: m[1], pid: child.pid!, stop: () => child.kill() });
    });
  });
}

/**
 * The sides in the order of table `t`'s turn: turned by one each table, so that what one side
 * leaves behind (the kernel writing its files back, a store finishing a request's work after its
 * answer, a catalog's work once its appends stop) lands on every side alike, not always on the next.
 */
export function inTurn<T>(sides: readonly T[], t: number): T[] {
  return sides.map((_, i) => sides[(i + t) % sides.length]);
}

/** CPU time a process has used so far, in µs. */
export function cpuOf(pid: number): number {
  const { user, system } = cpuSplitOf(pid);
  return user + system;
}

/** A process's CPU time so far in µs, user and kernel apart (Linux: utime and stime from /proc, in clock ticks of 10 ms). */
function cpuSplitOf(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

export function vectorTable(from: number, rows: number, dim: number, seed = 1): arrow.Table {
  // mulberry32: a full-period 32-bit generator, so no two rows repeat a vector.
  let state = (Math.imul(seed, 0x9e3779b1) ^ Math.imul(from + 1, 0x85ebca6b)) >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const type = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: rows * dim }, random);
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: rows }, (_, i) => from + i)),
    vector: arrow.makeVector(arrow.makeData({ type, length: rows, child: arrow.makeData({ type: new arrow.Float32(), length: rows * dim, data: values }) })),
  });
}

export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** Times `work` and the CPU process `pid` spent meanwhile, in µs, user and kernel apart. */
export async function timedWithCpu(pid: number, work: () => Promise<void>): Promise<{ ms: number; user: number; system: number }> {
  const before = cpuSplitOf(pid);
  const { ms } = await timed(work);
  const after = cpuSplitOf(pid);
  return { ms, user: after.user - before.user, system: after.system - before.system };
}

/** Named as Lance names a staging manifest (the final name and a uuid), so the server removes it once committed. */
export const stagingManifestName = (version: number) =>
  `${finalManifestName(version, 'V2')}-00000000-0000-4000-8000-${String(version).padStart(12, '0')}`;

export async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/**
 * The HTTP client of the data-plane requests: node:http with keep-alive by default. `fetch`
 * (BENCH_CLIENT=fetch) spends about as much CPU sending a 2.6 MB body as Lance spends writing it,
 * on the same two cores as the server, which would be measured as the server's cost.
 */
const CLIENT = process.env.BENCH_CLIENT ?? 'http';
const agent = new Agent({ keepAlive: true });

export async function send(url: string, contentType: string, body: Uint8Array): Promise<{ status: number; body: Buffer }> {
  if (CLIENT === 'fetch') {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
    return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
  }
  return new Promise((ok, fail) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': contentType, 'content-length': body.byteLength } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

export async function postArrow(url: string, table: arrow.Table): Promise<any> {
  const res = await send(url, 'application/vnd.apache.arrow.stream', arrow.tableToIPC(table, 'stream'));
  const text = res.body.toString();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** A JSON request whose answer is returned as bytes (QueryTable answers Arrow, CountTableRows a bare number). */
export async function postForBytes(url: string, body: unknown): Promise<Buffer> {
  const res = await send(url, 'application/json', Buffer.from(JSON.stringify(body)));
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.body.toString()}`);
  return res.body;
}

/** Lets the process exit: the keep-alive agent holds its sockets open otherwise. */
export function closeClient(): void {
  agent.destroy();
}

export async function settle(url: string, transactionId: string): Promise<any> {
  for (;;) {
    const tx = await post(`${url}/v1/transaction/${transactionId}/describe`, {});
    if (['Succeeded', 'Failed', 'Canceled'].includes(tx.status)) return tx;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Where report() also records its tables as JSON lines, for bench/chart.ts (BENCH_RESULTS, or none). */
const RESULTS = process.env.BENCH_RESULTS;

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function report(title: string, rows: Array<Record<string, string | number>>): void {
  if (RESULTS) appendFileSync(RESULTS, `${JSON.stringify({ title, rows, at: new Date().toISOString() })}\n`);
  console.log(`\n## ${title}\n`);
  const keys = Object.keys(rows[0]);
  console.log(`| ${keys.join(' | ')} |`);
  console.log(`|${keys.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${keys.map((k) => r[k]).join(' | ')} |`);
}
