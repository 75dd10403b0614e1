import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  AppendOptions,
  AppendResult,
  EventStore,
  EventStoreUnavailableError,
  ExpectedRevision,
  FileJournal,
  JournaledFile,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
  revisionMatches,
} from '../event-store.port';
import { WakeUp, pollingSubscription } from '../polling-subscription';

const COLUMNS = 'position, stream_id, revision, id, type, data, metadata, created';
/** A row as `COLUMNS` lists it; positions stay far below 2^53, so plain numbers are exact. */
type Row = [number, string, number, string, string, string, string, number];

/**
 * How often a subscription looks for other processes' appends (its own wake it at once). Each poll
 * wakes the process: at 50 ms, an idle server spent about 4 ms of CPU a second on them.
 */
const POLL_MS = 250;
const PAGE = 1000;

/**
 * The embedded default: one SQLite file. WAL with synchronous=FULL makes an acknowledged append
 * durable across kill -9; the unique (stream, revision) key inside one IMMEDIATE transaction gives
 * the same optimistic concurrency as EventStoreDB, also between processes sharing the file.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'embedded';
  private readonly db: Database.Database;
  private readonly listeners = new Set<WakeUp>();
  private readonly stmts;
  private readonly appendTx;
  private readonly heads = new Map<string, number>();
  private seenDataVersion?: bigint;
  readonly journal: FileJournal;

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file, { timeout: 10_000 });
    useWal(this.db);
    this.db.pragma('synchronous = FULL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        stream_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        id TEXT NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created INTEGER NOT NULL,
        UNIQUE (stream_id, revision)
      );
      CREATE TABLE IF NOT EXISTS file_journal (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL,
        bytes BLOB NOT NULL
      );
    `);
    this.db.defaultSafeIntegers(true);
    this.stmts = {
      head: this.db.prepare('SELECT MAX(revision) AS revision FROM events WHERE stream_id = ?'),
      insert: this.db.prepare(
        'INSERT INTO events (stream_id, revision, id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      // Rows as arrays with plain numbers: reading the log is what a cold start spends its time on.
      readStream: this.db
        .prepare(`SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?`)
        .raw(true)
        .safeIntegers(false),
      readAll: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`).raw(true).safeIntegers(false),
      ping: this.db.prepare('SELECT 1'),
      headPosition: this.db.prepare('SELECT coalesce(MAX(position), 0) FROM events').pluck(),
      journalFile: this.db.prepare('INSERT INTO file_journal (path, bytes) VALUES (?, ?)'),
      pendingFiles: this.db.prepare('SELECT id, path, bytes FROM file_journal ORDER BY id LIMIT ?').raw(true).safeIntegers(false),
      // length() of a blob reads its size from the row, not its overflow pages.
      pendingPaths: this.db.prepare('SELECT id, path, length(bytes) FROM file_journal WHERE id > ? ORDER BY id LIMIT ?').raw(true).safeIntegers(false),
      releaseFile: this.db.prepare('DELETE FROM file_journal WHERE id = ?'),
      // One pass over the journal (no index on path: it holds seconds of commits) for every path.
      releasePaths: this.db.prepare('DELETE FROM file_journal WHERE path IN (SELECT value FROM json_each(?))'),
      // AUTOINCREMENT's own record: ids are never reused, even once every file is released.
      newestFile: this.db.prepare("SELECT coalesce(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'file_journal'").pluck().safeIntegers(false),
      dataVersion: this.db.prepare('PRAGMA data_version').pluck(),
    };
    this.appendTx = this.db.transaction((streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, files: readonly JournaledFile[]) => {
      const current = this.headOf(streamId);
      if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(streamId, expected, current);
      const now = Date.now();
      const created = BigInt(now);
      let revision = current;
      let position = 0n;
      // Handed to this process's subscriptions (see append); built only when one listens.
      const recorded: RecordedEvent[] | undefined = this.listeners.size > 0 ? [] : undefined;
      for (const e of events) {
        revision++;
        const id = e.id ?? randomUUID();
        const info = this.stmts.insert.run(streamId, BigInt(revision), id, e.type, JSON.stringify(e.data ?? null), JSON.stringify(e.metadata ?? {}), created);
        position = BigInt(info.lastInsertRowid);
        recorded?.push({ id, streamId, revision, position, type: e.type, data: e.data ?? null, metadata: e.metadata ?? {}, created: new Date(now) });
      }
      for (const f of files) this.stmts.journalFile.run(f.path, Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength));
      return { nextExpectedRevision: revision, position, recorded };
    });
    const releaseTx = this.db.transaction((ids: readonly number[]) => {
      for (const id of ids) this.stmts.releaseFile.run(BigInt(id));
    });
    this.journal = {
      pending: async (limit) =>
        this.guard(() => (this.stmts.pendingFiles.all(BigInt(limit)) as Array<[number, string, Buffer]>).map(([id, path, bytes]) => ({ id, path, bytes }))),
      pendingPaths: async (limit, afterId = 0) =>
        this.guard(() =>
          (this.stmts.pendingPaths.all(BigInt(afterId), BigInt(limit)) as Array<[number, string, number]>).map(([id, path, size]) => ({ id, path, size })),
        ),
      newestId: async () => this.guard(() => this.stmts.newestFile.get() as number),
      release: async (ids) => {
        if (ids.length) this.guard(() => releaseTx.immediate(ids));
      },
      releasePaths: async (paths) => {
        if (paths.length) this.guard(() => this.stmts.releasePaths.run(JSON.stringify(paths)));
      },
    };
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    let written: AppendResult & { recorded?: RecordedEvent[] };
    try {
      written = this.guard(() => this.appendTx.immediate(streamId, events, expected, options.files ?? []));
    } catch (e) {
      this.heads.delete(streamId);
      throw e;
    }
    const { recorded, ...result } = written;
    this.heads.set(streamId, result.nextExpectedRevision);
    // This process's own events reach its subscriptions as written, without a read and a parse back.
    for (const wake of this.listeners) wake(recorded);
    return result;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const rows = this.guard(
      () => this.stmts.readStream.all(streamId, BigInt(options.fromRevision ?? 0), BigInt(options.maxCount ?? -1)) as Row[],
    );
    return rows.map(toRecorded);
  }

  async streamRevision(streamId: string): Promise<number> {
    return this.guard(() => this.headOf(streamId));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const rows = this.guard(() => this.stmts.readAll.all(options.afterPosition ?? 0n, BigInt(options.maxCount ?? -1)) as Row[]);
    return rows.map(toRecorded);
  }

  async headPosition(): Promise<bigint> {
    return this.guard(() => BigInt(this.stmts.headPosition.get() as bigint));
  }

  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => void | Promise<void>): Subscription {
    return pollingSubscription((o) => this.readAll(o), this.listeners, { page: PAGE, pollMs: POLL_MS }, options, onEvent);
  }

  async ping(): Promise<void> {
    this.guard(() => this.stmts.ping.get());
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /**
   * Stream heads are asked for before every answer. SQLite's data_version changes only when
   * another connection (another process) commits, and this connection's own commits go through
   * append, so a remembered head stays right until one of the two happens.
   */
  private headOf(streamId: string): number {
    const version = this.stmts.dataVersion.get() as bigint;
    if (version !== this.seenDataVersion) {
      this.heads.clear();
      this.seenDataVersion = version;
    }
    const known = this.heads.get(streamId);
    if (known !== undefined) return known;
    const row = this.stmts.head.get(streamId) as { revision: bigint | null };
    const head = row.revision === null ? -1 : Number(row.revision);
    this.heads.set(streamId, head);
    return head;
  }

  private guard<T>(work: () => T): T {
    try {
      return work();
    } catch (e) {
      if (e instanceof WrongExpectedRevisionError) throw e;
      if (e instanceof Error && /SQLITE_(BUSY|CANTOPEN|IOERR|READONLY|FULL)|database connection is not open/.test(`${(e as { code?: string }).code} ${e.message}`)) {
        throw new EventStoreUnavailableError(`embedded event store: ${e.message}`, e);
      }
      throw e;
    }
  }
}

/**
 * Switching a new file to WAL takes an exclusive lock without waiting on the busy timeout, so two
 * processes opening a fresh store at once would see one fail with SQLITE_BUSY: retry for a while.
 */
function useWal(db: Database.Database): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt++) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= 100) throw e;
      Atomics.wait(pause, 0, 0, 20 + Math.random() * 30);
    }
  }
}

function toRecorded([position, streamId, revision, id, type, data, metadata, created]: Row): RecordedEvent {
  return {
    id,
    streamId,
    revision,
    position: BigInt(position),
    type,
    data: JSON.parse(data),
    metadata: JSON.parse(metadata),
    created: new Date(created),
  };
}
