import * as lancedb from '@lancedb/lancedb';
import type { Data } from '@lancedb/lancedb';
import { basename, dirname } from 'node:path';
import { TableFiles } from '@app/storage';
import { HandleCache } from './handle-cache';
import { JsonArrowSchema, toJsonArrowSchema } from './json-arrow-schema';
import { manifestStats } from './manifest-stats';
import { WriterConnections, WriterHandle } from './writer-connections';

/** What the catalog says about a managed table: which one it is and its latest version. */
export interface ManagedTableRef {
  id: readonly string[];
  uuid: string;
  latestVersion?: number;
  /** Absent: the main branch. */
  branch?: string;
  /** When the branch was made: a branch deleted and made again under its name is another line of versions. */
  branchCreatedAtMillis?: number;
}

/**
 * Runs a write whose commits carry `writer` (see WRITER_HEADER): the caller can expect them at its
 * own `version/create`. No other work commits through that writer meanwhile.
 */
export type AsWriter = <T>(writer: string, write: () => Promise<T>) => Promise<T>;

const plainWrite: AsWriter = (_writer, write) => write();

export interface TableDetails {
  version: number;
  schema: JsonArrowSchema;
  stats: { num_deleted_rows: number; num_fragments: number };
  metadata: Record<string, string>;
}

/**
 * Opens Lance datasets for the server's own reads and writes. Managed tables are opened through
 * this catalog's REST binding, so every commit the server makes arrives as `version/create` like
 * any client's and becomes an event; unmanaged tables are opened at their location.
 */
export class LanceTables {
  private readonly connections = new Map<string, Promise<lancedb.Connection>>();
  private readonly handles: HandleCache<WriterHandle>;
  private readonly writers: WriterConnections;
  /** One set of Lance caches for every connection of this process, as when they shared one connection. */
  private readonly session = new lancedb.Session();

  constructor(
    private readonly options: {
      selfUrl: () => string;
      headers?: Record<string, string>;
      cachedTables?: number;
      /** The warehouse's files, for what Lance does not report (fragment counts from a manifest); describeDetails needs them. */
      files?: TableFiles;
      /** How this process reaches the warehouse, for tables opened at their location. */
      storageOptions?: Record<string, string>;
    },
  ) {
    this.handles = new HandleCache(options.cachedTables ?? 256);
    this.writers = new WriterConnections((database, headers) => this.connect(database, headers));
  }

  /**
   * Runs `work` on this process's open handle of a managed table's latest version, so a request
   * does not re-open the table through the catalog (describe and version/list round trips).
   *
   * The handle is keyed by the table's uuid and id: a re-created table (new uuid) or a renamed one
   * (its handle names the table by id in every catalog call) never reuses an old handle. Before use
   * it is made current with the version the caller's caught-up catalog state names (`checkoutLatest`,
   * one version/list, only when they differ), so a read reflects every version acknowledged before
   * the request arrived, whoever committed it. Comparing numbers is enough: a version's manifest is
   * finalised put-if-not-exists and never replaced, so version N on the handle is version N in the
   * catalog. Writes and refreshes are serialised per handle: a refresh can then never move a handle
   * back behind a write that committed meanwhile, and each write starts from the latest version
   * (Lance still resolves a commit that loses a race through version/create's 409, as for any client).
   * A write that fails drops the handle, so whatever state Lance left it in is not reused.
   *
   * Each handle is opened through a writer connection of its own and `work` is told its writer id:
   * as writes on a handle run one at a time and reads commit nothing, a `version/create` carrying
   * that id while a write runs is that write's commit.
   */
  async withLatest<T>(
    database: string,
    table: ManagedTableRef,
    access: 'read' | 'write',
    work: (t: lancedb.Table, writer: string) => Promise<T>,
  ): Promise<T> {
    const key = [database, table.uuid, table.branch ?? '', table.branchCreatedAtMillis ?? '', ...table.id].join('\u0000');
    return this.handles.use(key, () => this.openAsWriter(database, [...table.id], table.branch), async (slot, { table: handle, writer }) => {
      // Only ever called inside slot.exclusive, like every change to the handle or to slot.version.
      const current = async () => {
        let version = slot.version ?? (await handle.version());
        if (version !== table.latestVersion) {
          await handle.checkoutLatest();
          version = await handle.version();
        }
        slot.version = version;
      };
      try {
        if (access === 'write') {
          return await slot.exclusive(async () => {
            await current();
            const result = await work(handle, writer);
            slot.version = committedVersion(result) ?? (await handle.version());
            return result;
          });
        }
        if (slot.version !== table.latestVersion) await slot.exclusive(current);
      } catch (e) {
        this.handles.discard(slot);
        throw e;
      }
      return work(handle, writer);
    });
  }

  private async openAsWriter(database: string, id: string[], branch: string | undefined): Promise<WriterHandle> {
    const lease = await this.writers.lease(database);
    try {
      return new WriterHandle(await lease.connection.openTable(id[id.length - 1], id.slice(0, -1), branch === undefined ? undefined : { branch }), lease);
    } catch (e) {
      lease.release();
      throw e;
    }
  }

  async open(database: string, id: string[], opts: { version?: number; branch?: string } = {}): Promise<lancedb.Table> {
    const db = await this.connection(database);
    const table = await db.openTable(id[id.length - 1], id.slice(0, -1), opts.branch === undefined ? undefined : { branch: opts.branch });
    if (opts.version !== undefined) await table.checkout(opts.version);
    return table;
  }

  /**
   * Writes the first data of a declared table (or replaces a table's content); answers the version
   * written. Managed: through a writer connection of this catalog, which answers the client's
   * declare with "exists" and its describe with "declared only", so Lance writes at the declared
   * location and commits through `version/create`, under that writer's id (see `asWriter`).
   * Unmanaged: at the location, with no commit to the catalog. `storageOptions`: the caller's
   * write-time options for a new dataset (CreateTable's `storage_options`, checked by the API).
   */
  async createAt(
    database: string,
    table: { id: readonly string[]; location: string; managedVersioning: boolean },
    data: Data,
    mode: 'create' | 'overwrite' = 'create',
    asWriter: AsWriter = plainWrite,
    storageOptions?: Record<string, string>,
  ): Promise<number> {
    const id = [...table.id];
    const options = { mode, ...(storageOptions ? { storageOptions } : {}) };
    if (table.managedVersioning) {
      const lease = await this.writers.lease(database);
      try {
        return await asWriter(lease.writer, () => versionOf(lease.connection.createTable(id[id.length - 1], data, id.slice(0, -1), options)));
      } finally {
        lease.release();
      }
    }
    const db = await lancedb.connect(dirname(table.location), { storageOptions: this.options.storageOptions });
    return versionOf(db.createTable(basename(table.location).replace(/\.lance$/, ''), data, options));
  }

  async openAtLocation(location: string, version?: number): Promise<lancedb.Table> {
    const db = await lancedb.connect(dirname(location), { storageOptions: this.options.storageOptions });
    const table = await db.openTable(basename(location).replace(/\.lance$/, ''));
    if (version !== undefined) await table.checkout(version);
    return table;
  }

  async describeDetails(table: lancedb.Table, location: string): Promise<TableDetails> {
    const [version, schema, stats] = await Promise.all([table.version(), table.schema(), table.stats()]);
    const fromManifest = this.options.files ? await manifestStats(this.options.files, location, version) : undefined;
    return {
      version,
      schema: toJsonArrowSchema(schema),
      stats: {
        num_deleted_rows: fromManifest?.numDeletedRows ?? 0,
        num_fragments: fromManifest?.numFragments ?? stats.fragmentStats.numFragments,
      },
      metadata: Object.fromEntries(schema.metadata),
    };
  }

  /** Makes `version` the content of a new latest version; returns that new version. */
  async restore(table: lancedb.Table, version: number): Promise<number> {
    await table.checkout(version);
    await table.restore();
    return table.version();
  }

  async close(): Promise<void> {
    this.handles.close();
    this.writers.close();
    for (const pending of this.connections.values()) (await pending.catch(() => undefined))?.close();
    this.connections.clear();
  }

  /**
   * Defines a materialized view in the root namespace (all lancedb 0.39 can): an empty table whose
   * schema metadata holds the definition; answers its version.
   */
  async createMaterializedView(
    database: string,
    name: string,
    source: string,
    query: { select: Array<[string, string]>; where?: string; limit?: number },
  ): Promise<number> {
    const view = await (await this.connection(database)).createMaterializedView(name, source, query);
    const table = view.table();
    try {
      return await table.version();
    } finally {
      table.close();
    }
  }

  private connection(database: string): Promise<lancedb.Connection> {
    let pending = this.connections.get(database);
    if (!pending) {
      pending = this.connect(database);
      pending.catch(() => this.connections.delete(database));
      this.connections.set(database, pending);
    }
    return pending;
  }

  private connect(database: string, headers: Record<string, string> = {}): Promise<lancedb.Connection> {
    return lancedb.connectNamespace(
      'rest',
      {
        uri: this.options.selfUrl(),
        headers: { ...this.options.headers, ...headers, 'x-lance-database': database, 'x-lance-ctx-origin': 'catalog-server' },
      },
      { session: this.session },
    );
  }
}

async function versionOf(created: Promise<lancedb.Table>): Promise<number> {
  const table = await created;
  try {
    return await table.version();
  } finally {
    table.close();
  }
}

/**
 * The version a write committed, when its result says (Lance's add, update, delete and merge
 * results do). Asking the handle instead took about a millisecond right after a write in a busy
 * server, against 25 µs on an idle one.
 */
function committedVersion(result: unknown): number | undefined {
  const version = (result as { version?: unknown } | null | undefined)?.version;
  return typeof version === 'number' ? version : undefined;
}
