import { randomUUID } from 'node:crypto';
import { Client, Pool, PoolClient } from 'pg';
import {
  AppendResult,
  EventStore,
  EventStoreUnavailableError,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
} from '../event-store.port';
import { WakeUp, pollingSubscription } from '../polling-subscription';
import { APPEND_LOCK, APPEND_STATEMENT, CHANNEL, POSTGRES_SCHEMA, redactedUrl } from './postgres-schema';

/** The schema's migration takes this transaction-level lock. */
const SCHEMA_LOCK = APPEND_LOCK + 1;
const PAGE = 5000;
/** A subscription also looks for new events this often, in case a notification was missed. */
const POLL_MS = 1000;

const COLUMNS = 'position, stream_id, revision, id, type, data, metadata, created';

export interface PostgresEventStoreOptions {
  /** Connections in the pool (EVENT_STORE_POOL_SIZE). */
  poolSize?: number;
}

/**
 * The event store on PostgreSQL (node-postgres). One `lance_catalog_events` table holds every
 * event: a unique (stream, revision) key and a per-stream head row give optimistic concurrency
 * within one statement per append (`lance_catalog_append`), and a global advisory lock taken by
 * each append makes the `position` order the commit order, so a reader "after position P" never
 * skips an event that commits later with a smaller position. New events are announced with NOTIFY.
 */
export class PostgresEventStore implements EventStore {
  readonly kind = 'postgresql';
  private readonly pool: Pool;
  private ready?: Promise<void>;
  private readonly listeners = new Set<WakeUp>();
  private listener?: Client;
  private listening?: Promise<void>;
  private closed = false;

  constructor(
    private readonly url: string,
    options: PostgresEventStoreOptions = {},
  ) {
    this.pool = new Pool({ connectionString: url, max: options.poolSize ?? 10, connectionTimeoutMillis: 5000 });
    // An idle connection the server dropped must not take the process down.
    this.pool.on('error', () => undefined);
    // A connection PostgreSQL ends (a restart, a fast shutdown) emits 'error' on its client after
    // failing its query; the pool listens only while the client is idle, so one checked out by an
    // append would throw it out of the process. The query's failure answers the caller, and the
    // pool drops the client when it is released.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** Creates or migrates the schema once per process; several processes may start at once. */
  private schema(): Promise<void> {
    this.ready ??= this.guard(async () => {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
        await client.query(POSTGRES_SCHEMA);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    }).catch((e) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    await this.schema();
    return this.guard(async () => {
      const { rows } = await this.pool.query<{ o_position: string | null; o_revision: number }>(APPEND_STATEMENT, [
        streamId,
        String(expected),
        events.map((e) => e.id ?? randomUUID()),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.data ?? null)),
        events.map((e) => JSON.stringify(e.metadata ?? {})),
      ]);
      const [{ o_position: position, o_revision: revision }] = rows;
      if (position === null) throw new WrongExpectedRevisionError(streamId, expected, revision);
      for (const wake of this.listeners) wake();
      return { nextExpectedRevision: revision, position: BigInt(position) };
    });
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    await this.schema();
    const rows = await this.rows(
      `SELECT ${COLUMNS} FROM lance_catalog_events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
      [streamId, options.fromRevision ?? 0, options.maxCount ?? null],
    );
    return rows.map(toRecorded);
  }

  async streamRevision(streamId: string): Promise<number> {
    await this.schema();
    const rows = await this.rows('SELECT revision FROM lance_catalog_streams WHERE stream_id = $1', [streamId]);
    return rows.length ? Number(rows[0][0]) : -1;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    await this.schema();
    const rows = await this.rows(`SELECT ${COLUMNS} FROM lance_catalog_events WHERE position > $1 ORDER BY position LIMIT $2`, [
      (options.afterPosition ?? 0n).toString(),
      options.maxCount ?? null,
    ]);
    return rows.map(toRecorded);
  }

  async headPosition(): Promise<bigint> {
    await this.schema();
    const rows = await this.rows('SELECT coalesce(max(position), 0)::text FROM lance_catalog_events', []);
    return BigInt(rows[0][0] as string);
  }

  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => void | Promise<void>): Subscription {
    const subscription = pollingSubscription((o) => this.readAll(o), this.listeners, { page: PAGE, pollMs: POLL_MS }, options, onEvent);
    void this.listen();
    return subscription;
  }

  async ping(): Promise<void> {
    await this.schema();
    await this.rows('SELECT 1', []);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /**
   * One connection LISTENs for other processes' appends and wakes the subscriptions; if it drops,
   * they still poll every second and it is opened again.
   */
  private listen(): Promise<void> {
    if (this.listening || this.closed) return this.listening ?? Promise.resolve();
    this.listening = (async () => {
      const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
      client.on('notification', () => {
        for (const wake of this.listeners) wake();
      });
      const reopen = () => {
        this.listener = undefined;
        this.listening = undefined;
        if (!this.closed && this.listeners.size) setTimeout(() => void this.listen(), POLL_MS).unref();
      };
      client.on('error', () => undefined);
      client.on('end', reopen);
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        this.listener = client;
        if (this.closed) await client.end();
      } catch {
        await client.end().catch(() => undefined);
      }
    })();
    return this.listening;
  }

  private async rows(sql: string, values: unknown[]): Promise<unknown[][]> {
    return this.guard(async () => (await this.pool.query({ text: sql, values, rowMode: 'array' })).rows);
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof WrongExpectedRevisionError) throw e;
      if (unreachable(e)) throw new EventStoreUnavailableError(`PostgreSQL event store at ${redactedUrl(this.url)}: ${(e as Error).message}`, e);
      throw e;
    }
  }
}

/** Connection failures and a server going away (not a refused statement) mean "retry later". */
function unreachable(e: unknown): boolean {
  const code = (e as { code?: string }).code ?? '';
  const message = e instanceof Error ? e.message : String(e);
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', '57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08001', '08004'].includes(code) ||
    /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|connection ended/i.test(message)
  );
}

function toRecorded([position, streamId, revision, id, type, data, metadata, created]: unknown[]): RecordedEvent {
  return {
    id: id as string,
    streamId: streamId as string,
    revision: Number(revision),
    position: BigInt(position as string),
    type: type as string,
    data: JSON.parse(data as string),
    metadata: JSON.parse(metadata as string),
    created: created as Date,
  };
}

export type { PoolClient };
