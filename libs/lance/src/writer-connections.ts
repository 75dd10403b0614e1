import type * as lancedb from '@lancedb/lancedb';
import { randomUUID } from 'node:crypto';

/**
 * The header every call of a writer connection carries: the writer's id, so a `version/create`
 * arriving at this process can be traced back to the write of this process that made it.
 */
export const WRITER_HEADER = 'x-lance-catalog-writer';

/** A connection lent to one user at a time; every call it makes carries `writer`. */
export interface WriterLease {
  readonly writer: string;
  readonly connection: lancedb.Connection;
  /** Gives the connection back; nothing opened through it may be used afterwards. */
  release(): void;
}

/**
 * Connections back into this catalog, each with a writer id of its own, lent to one user at a time
 * (a cached table handle for its lifetime, or one CreateTable). Opening one costs about 5 ms (its
 * native HTTP client), so a released one is kept for the next user, up to `keepIdle` per database.
 */
export class WriterConnections {
  private readonly idle = new Map<string, Array<Omit<WriterLease, 'release'>>>();
  private closed = false;

  constructor(
    private readonly connect: (database: string, headers: Record<string, string>) => Promise<lancedb.Connection>,
    private readonly keepIdle = 4,
  ) {}

  async lease(database: string): Promise<WriterLease> {
    const kept = this.idle.get(database)?.pop();
    if (kept) return this.lend(database, kept);
    const writer = randomUUID();
    return this.lend(database, { writer, connection: await this.connect(database, { [WRITER_HEADER]: writer }) });
  }

  private lend(database: string, kept: Omit<WriterLease, 'release'>): WriterLease {
    let lent = true;
    return {
      ...kept,
      release: () => {
        if (!lent) return;
        lent = false;
        const idle = this.idle.get(database) ?? [];
        if (this.closed || idle.length >= this.keepIdle) return kept.connection.close();
        idle.push(kept);
        this.idle.set(database, idle);
      },
    };
  }

  /** Closes the idle connections; ones still lent close when they are released. */
  close(): void {
    this.closed = true;
    for (const leases of this.idle.values()) for (const lease of leases) lease.connection.close();
    this.idle.clear();
  }
}

/** A table handle and the writer connection it was opened through, which it keeps until it closes. */
export class WriterHandle {
  constructor(
    readonly table: lancedb.Table,
    private readonly lease: WriterLease,
  ) {}

  get writer(): string {
    return this.lease.writer;
  }

  close(): void {
    this.table.close();
    this.lease.release();
  }
}
