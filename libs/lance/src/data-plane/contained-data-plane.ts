import { ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, ErrorCode } from '@app/catalog';
import { DataPlane, DataPlaneCall, DataPlaneFailure, DataPlaneHooks, DataPlaneKind, DataPlaneOp, DataPlaneResult, ownTimeoutMs } from './data-plane-ops';
import { allocatorSettings } from './allocator-settings';
import { FairQueue, Share } from './fair-queue';
import { DataPlaneProcessSettings, FromChild, SETTINGS_ENV, ToChild, fromWire } from './data-plane-wire';

export interface ContainedDataPlaneOptions {
  /** How many data-plane processes may run at once; each runs one operation at a time. */
  processes: number;
  /** How many of them one database's operations may hold at once (DATA_PLANE_PROCESSES_PER_DATABASE; absent or 0: all but one). */
  perDatabase?: number;
  /** How many of one database's operations may wait for a process (DATA_PLANE_QUEUE_PER_DATABASE); past it, 503. */
  queuePerDatabase?: number;
  /** How long an operation may run (DATA_PLANE_TIMEOUT_MS); its process is then killed and replaced. */
  timeoutMs?: number;
  /** A process whose resident memory passes this while it runs an operation is killed, and that operation refused. */
  memoryBytes: number;
  /** What a process is started with; asked at each start, as the server's own address is known only once it listens. */
  settings: () => Omit<DataPlaneProcessSettings, 'inputPath'>;
  log: (level: 'warn' | 'error', message: string) => void;
  /** Told each time a process ends under an operation, and why. */
  onEnded?: (reason: DataPlaneEnd) => void;
  /** Told how long each operation waited for a process. */
  onWaited?: (seconds: number) => void;
  /** Told each time an operation is refused because its database's queue is full. */
  onQueueFull?: () => void;
  /** The compiled process script; by default the one beside this file. */
  entry?: string;
}

/** Why a process ended under an operation. */
export type DataPlaneEnd = 'crashed' | 'memory' | 'timeout' | 'cancelled';

interface Job {
  op: DataPlaneOp;
  hooks: DataPlaneHooks;
  share: Share;
  call: DataPlaneCall;
  queuedAt: number;
  resolve: (result: unknown) => void;
  reject: (e: unknown) => void;
  /** Stops listening to the caller's departure once the job is settled. */
  release?: () => void;
}

const WATCH_MS = 100;
/** A process left holding this share of the cap after an operation is replaced: the next one would start near the cap. */
const RECYCLE_SHARE = 0.75;

/**
 * Runs data operations in a small pool of child processes (see data-plane-process.ts), so that a
 * crash or a runaway allocation inside Lance costs the one request that caused it. Each process
 * runs one operation at a time: whatever ends it can then be laid at that operation's door.
 * Processes start on demand and are replaced when one ends. Request bodies reach a process through
 * a file of its own that both keep open (written over in place: a fresh buffer's page faults cost
 * more than the copy; see docs/security.md); answers come back over the IPC channel.
 *
 * The processes are shared fairly (FairQueue): one database holds at most `perDatabase` of them
 * (by default all but one, so another database always finds one within an operation's time), its
 * waiting operations are bounded, an operation runs at most `timeoutMs` (or the caller's own
 * shorter timeout), and a caller that leaves takes its operation with it. Lance cannot stop a
 * running operation, so a timed-out or abandoned one ends with its process, which is replaced.
 */
export class ContainedDataPlane implements DataPlane {
  private readonly processes = new Set<DataPlaneProcess>();
  private readonly waiting = new FairQueue<Job>();
  private readonly running = new Map<string, number>();
  private readonly perDatabase: number;
  private closed = false;

  constructor(private readonly options: ContainedDataPlaneOptions) {
    this.perDatabase = Math.min(options.processes, options.perDatabase || Math.max(1, options.processes - 1));
  }

  run<K extends DataPlaneKind>(op: Extract<DataPlaneOp, { kind: K }>, hooks: DataPlaneHooks = {}, call: DataPlaneCall = {}): Promise<DataPlaneResult<K>> {
    if (this.closed) return Promise.reject(new DataPlaneFailure('open', 'the data plane is shutting down', 'unavailable'));
    if (call.signal?.aborted) return Promise.reject(new DataPlaneFailure('open', 'the caller left before the operation started', 'cancelled'));
    const share = { database: op.table.database, principal: call.principal ?? '' };
    const bound = this.options.queuePerDatabase;
    if (bound !== undefined && this.waiting.waiting(share.database) >= bound && this.atCap(share.database) && !this.belowFairShare(share, bound)) {
      this.options.onQueueFull?.();
      return Promise.reject(
        new CatalogError(
          ErrorCode.ServiceUnavailable,
          `this database already has ${this.waiting.waiting(share.database)} data operations waiting for a data-plane process, ${this.waiting.waitingOf(share)} of them this caller's (DATA_PLANE_QUEUE_PER_DATABASE is ${bound}); retry later`,
        ),
      );
    }
    return new Promise<unknown>((resolve, reject) => {
      const job: Job = { op, hooks, share, call, queuedAt: Date.now(), resolve, reject };
      if (call.signal) {
        const left = () => {
          // Still waiting: it never runs. Running: its process is ended (DataPlaneProcess.cancel).
          if (this.waiting.remove(share, job)) reject(new DataPlaneFailure('open', 'the caller left before the operation started', 'cancelled'));
        };
        call.signal.addEventListener('abort', left, { once: true });
        job.release = () => call.signal?.removeEventListener('abort', left);
      }
      this.waiting.add(share, job);
      this.dispatch();
    }) as Promise<DataPlaneResult<K>>;
  }

  /**
   * Whether a principal holds less than its part of its database's queue (the bound shared by the
   * principals waiting, itself counted): such a one is queued past the bound, so that one principal
   * filling the queue does not refuse the others of its database. A principal is let past the bound
   * only while below its part as it arrives, so the queue can hold a few times the bound at most
   * (the bound times the harmonic number of the principals waiting), and the principals are the
   * keys and users the database's admins made.
   */
  private belowFairShare(share: Share, bound: number): boolean {
    const own = this.waiting.waitingOf(share);
    const principals = this.waiting.principalsWaiting(share.database) + (own === 0 ? 1 : 0);
    return own < Math.floor(bound / principals);
  }

  private atCap(database: string): boolean {
    return (this.running.get(database) ?? 0) >= this.perDatabase;
  }

  /** Hands waiting operations to idle processes, fairly, preferring a process that served the same table last (its handle is warm). */
  private dispatch(): void {
    while (this.waiting.size > 0) {
      const idle = [...this.processes].filter((p) => p.idle);
      if (idle.length === 0 && this.processes.size >= this.options.processes) return;
      const next = this.waiting.take((database) => !this.atCap(database));
      if (!next) return;
      const job = next.item;
      const chosen = idle.find((p) => p.served(job.op.table.uuid)) ?? idle[0] ?? this.start();
      const database = job.share.database;
      this.running.set(database, (this.running.get(database) ?? 0) + 1);
      this.options.onWaited?.((Date.now() - job.queuedAt) / 1000);
      const timeoutMs = Math.min(this.options.timeoutMs ?? Infinity, ownTimeoutMs(job.op) ?? Infinity);
      chosen
        .run(job.op, job.hooks, { timeoutMs: Number.isFinite(timeoutMs) ? timeoutMs : undefined, signal: job.call.signal })
        .then(job.resolve, job.reject)
        .finally(() => {
          job.release?.();
          const left = (this.running.get(database) ?? 1) - 1;
          if (left > 0) this.running.set(database, left);
          else this.running.delete(database);
          if (chosen.ended) this.processes.delete(chosen);
          else if (chosen.residentBytes() > this.options.memoryBytes * RECYCLE_SHARE) {
            this.processes.delete(chosen);
            void chosen.stop();
          }
          this.dispatch();
        });
    }
  }

  private start(): DataPlaneProcess {
    const process = new DataPlaneProcess(this.options);
    this.processes.add(process);
    process.exited.then(() => {
      this.processes.delete(process);
      if (!this.closed) this.dispatch();
    });
    return process;
  }

  /** Lets running operations finish (up to `graceMs`), then ends every process. */
  async close(graceMs = 30_000): Promise<void> {
    this.closed = true;
    for (let next = this.waiting.take(() => true); next; next = this.waiting.take(() => true)) {
      next.item.release?.();
      next.item.reject(new DataPlaneFailure('open', 'the data plane is shutting down', 'unavailable'));
    }
    const deadline = Date.now() + graceMs;
    while ([...this.processes].some((p) => p.busy) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await Promise.all([...this.processes].map((p) => p.stop()));
  }
}

/** One child process and the operation it runs. */
class DataPlaneProcess {
  private readonly child: ChildProcess;
  private readonly input: { fd: number; path: string; unlinked: boolean };
  private readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  private current?: { id: number; job: Pick<Job, 'hooks' | 'resolve' | 'reject'>; watch?: NodeJS.Timeout; deadline?: NodeJS.Timeout; release?: () => void };
  private currentTable?: string;
  private nextId = 0;
  private readonly recent: string[] = [];
  /** The writer each table's last write here committed through: its cached handle's, most likely the next one's too. */
  private readonly writers = new Map<string, string>();
  private endedBy?: DataPlaneEnd | 'unavailable';
  private timeoutMs?: number;
  private stopping = false;
  private isReady = false;

  constructor(private readonly options: ContainedDataPlaneOptions) {
    const path = join(inputDirectory(), `lance-catalog-data-plane-${process.pid}-${randomBytes(6).toString('hex')}`);
    this.input = { fd: openSync(path, 'w+', 0o600), path, unlinked: false };
    const settings: DataPlaneProcessSettings = { ...options.settings(), inputPath: path };
    this.child = fork(options.entry ?? join(__dirname, 'data-plane-process.js'), [], {
      serialization: 'advanced',
      // Not the parent's flags (a profiler's, say): this is a process of its own.
      execArgv: [],
      env: { ...process.env, ...allocatorSettings(process.env, options.memoryBytes), [SETTINGS_ENV]: JSON.stringify(settings) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let readied: () => void;
    this.ready = new Promise<void>((resolve) => (readied = resolve));
    this.child.on('message', (m: FromChild) => {
      if (m.t === 'ready') {
        this.isReady = true;
        this.unlinkInput();
        readied();
      } else this.receive(m);
    });
    this.exited = new Promise<void>((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.unlinkInput();
        closeSync(this.input.fd);
        if (!this.isReady) {
          this.endedBy ??= 'unavailable';
          this.options.log('error', `a data-plane process ended before it was ready (${signal ?? `exit code ${code}`})`);
        }
        this.end(code, signal);
        resolve();
      });
    });
    this.child.on('error', (e) => this.options.log('error', `data-plane process ${this.child.pid}: ${e.message}`));
  }

  get idle(): boolean {
    return !this.current && !this.stopping && this.endedBy === undefined;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  get ended(): boolean {
    return this.endedBy !== undefined || this.stopping;
  }

  served(tableUuid: string): boolean {
    return this.recent.includes(tableUuid);
  }

  async run(op: DataPlaneOp, hooks: DataPlaneHooks, limits: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<unknown> {
    const id = ++this.nextId;
    this.currentTable = op.table.uuid;
    this.recent.unshift(op.table.uuid);
    this.recent.length = Math.min(this.recent.length, 16);
    return new Promise<unknown>((resolve, reject) => {
      this.current = { id, job: { hooks, resolve, reject } };
      // Lance cannot stop an operation under way: past its time, or once its caller left, the process ends with it.
      if (limits.timeoutMs !== undefined) {
        this.timeoutMs = limits.timeoutMs;
        this.current.deadline = setTimeout(() => this.kill('timeout'), limits.timeoutMs);
      }
      if (limits.signal) {
        const left = () => this.kill('cancelled');
        limits.signal.addEventListener('abort', left, { once: true });
        this.current.release = () => limits.signal?.removeEventListener('abort', left);
      }
      void this.ready.then(async () => {
        if (this.current?.id !== id) return;
        try {
          const message: ToChild = { t: 'run', id, op };
          // Announced before the operation starts, which spares the commit a round trip to ask.
          const known = op.kind === 'insert' ? this.writers.get(op.table.uuid) : undefined;
          if (known !== undefined && hooks.writing) {
            await hooks.writing(known);
            message.expectedWriter = known;
          }
          if (this.current?.id !== id) return;
          if ('body' in op && op.body) {
            writeAll(this.input.fd, op.body);
            message.op = { ...op, body: new Uint8Array(0) };
            message.input = op.body.byteLength;
          }
          this.current.watch = setInterval(() => this.watchMemory(), WATCH_MS);
          this.child.send(message);
        } catch (e) {
          this.settle(id, () => reject(new DataPlaneFailure('open', `handing the operation to a data-plane process failed: ${(e as Error).message}`, 'unavailable')));
        }
      });
    });
  }

  /** Ends the process under its operation, for `reason`. */
  private kill(reason: 'timeout' | 'cancelled'): void {
    if (!this.current || this.endedBy) return;
    this.endedBy = reason;
    if (reason === 'timeout') this.options.log('warn', `data-plane process ${this.child.pid} ran an operation past its ${this.timeoutMs} ms and was killed with it`);
    this.child.kill('SIGKILL');
  }

  private receive(m: FromChild): void {
    if (m.t === 'ready' || m.id !== this.current?.id) return;
    const { job } = this.current;
    if (m.t === 'writing') {
      Promise.resolve()
        .then(() => job.hooks.writing?.(m.writer))
        .then(() => {
          if (this.current?.id === m.id && this.child.connected) this.child.send({ t: 'go', id: m.id } satisfies ToChild);
        })
        .catch((e) => this.settle(m.id, () => job.reject(e)));
    } else if (m.t === 'done') {
      if (m.writer !== undefined && this.current) this.remember(m.writer);
      this.settle(m.id, () => job.resolve(m.result));
    }
    else this.settle(m.id, () => job.reject(fromWire(m.error)));
  }

  private remember(writer: string): void {
    const table = this.currentTable;
    if (table !== undefined) this.writers.set(table, writer);
    if (this.writers.size > 1024) this.writers.delete(this.writers.keys().next().value!);
  }

  private settle(id: number, answer: () => void): void {
    if (this.current?.id !== id) return;
    clearInterval(this.current.watch);
    clearTimeout(this.current.deadline);
    this.current.release?.();
    this.current = undefined;
    answer();
  }

  private watchMemory(): void {
    const resident = this.residentBytes();
    if (resident <= this.options.memoryBytes || this.endedBy) return;
    this.endedBy = 'memory';
    this.options.log(
      'warn',
      `data-plane process ${this.child.pid} passed its memory cap (${mb(resident)} MB resident, cap ${mb(this.options.memoryBytes)} MB) and was killed with the operation it ran`,
    );
    this.child.kill('SIGKILL');
  }

  /** The process's resident memory, from /proc (0 where there is none to read). */
  residentBytes(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'latin1'));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  }

  private end(code: number | null, signal: NodeJS.Signals | null): void {
    const current = this.current;
    const reason = this.endedBy ?? (this.stopping ? 'unavailable' : 'crashed');
    this.endedBy = reason;
    if (!current) return;
    if (reason === 'crashed') {
      this.options.log('error', `data-plane process ${this.child.pid} ended (${signal ?? `exit code ${code}`}) while it ran an operation; it is replaced`);
    }
    if (reason !== 'unavailable') this.options.onEnded?.(reason);
    const message =
      reason === 'memory'
        ? `the operation needed more than ${mb(this.options.memoryBytes)} MB of memory`
        : reason === 'timeout'
          ? `the operation ran longer than ${this.timeoutMs} ms`
          : reason === 'cancelled'
            ? 'the caller left while the operation ran'
            : `the data-plane process running the operation ended (${signal ?? `exit code ${code}`})`;
    this.settle(current.id, () => current.job.reject(new DataPlaneFailure('work', message, reason, this.timeoutMs)));
  }

  private unlinkInput(): void {
    if (this.input.unlinked) return;
    this.input.unlinked = true;
    try {
      unlinkSync(this.input.path);
    } catch {
      // Already gone.
    }
  }

  /** Ends the process once it has no operation (its parent's disconnect tells it to close its handles and exit). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      if (this.child.connected) this.child.disconnect();
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await this.exited;
      clearTimeout(killer);
    }
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let at = 0;
  while (at < bytes.byteLength) at += writeSync(fd, bytes, at, bytes.byteLength - at, at);
}

/** Memory-backed where the system has it, so a body never goes to disk on its way to a process. */
function inputDirectory(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

function mb(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}
