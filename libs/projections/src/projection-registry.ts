import { EventStore } from '@app/event-store';
import { CatalogProjection } from './catalog-projection';
import { Snapshots } from './snapshots';

/** How many projections of databases without an event are kept; past it, the oldest are let go. */
const EMPTY_KEPT = 256;

/**
 * Holds one projection per database, created on first use. A database is named by a request's
 * header, so a caller may name any number that hold nothing (each projection took about 40 KB: 25,000
 * made-up names took a gigabyte). Projections that have folded no event are therefore let go past
 * EMPTY_KEPT, the oldest first: nothing holds a projection past a call, and one made again reads
 * the same stream.
 */
export class ProjectionRegistry {
  private readonly projections = new Map<string, CatalogProjection>();
  /** Databases whose projection held no event when made, oldest first. */
  private readonly unborn = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly snapshots?: Snapshots,
    private readonly transactionMemoryMs = 0,
  ) {}

  get(database: string): CatalogProjection {
    let projection = this.projections.get(database);
    if (!projection) {
      projection = new CatalogProjection(this.store, database, this.snapshots, this.transactionMemoryMs);
      this.projections.set(database, projection);
      this.unborn.add(database);
      if (this.unborn.size > EMPTY_KEPT) this.letGoOfEmpty(database);
    }
    return projection;
  }

  /**
   * Lets go of the oldest projections that hold nothing, down to half of EMPTY_KEPT; one that has
   * folded an event is no longer watched here, one restoring a snapshot is passed over for now.
   */
  private letGoOfEmpty(keep: string): void {
    for (const database of this.unborn) {
      if (this.unborn.size <= EMPTY_KEPT / 2) return;
      const projection = this.projections.get(database);
      if (database === keep || projection?.restoring) continue;
      this.unborn.delete(database);
      if (projection && projection.state.revision < 0) this.projections.delete(database);
    }
  }

  /**
   * A projection already caught up to its stream's head; `since`: when the request arrived
   * (performance.now()), so that a head read begun after it serves (CatalogProjection.catchUp).
   */
  current(database: string, since?: number): Promise<CatalogProjection> {
    const projection = this.get(database);
    return projection.catchUp(since).then(() => projection);
  }

  /** The same, reading the head right now rather than with the other callers of this turn. */
  async currentNow(database: string): Promise<CatalogProjection> {
    const projection = this.get(database);
    await projection.catchUpNow();
    return projection;
  }

  databases(): string[] {
    return [...this.projections.keys()];
  }

  /** Graceful shutdown: every projection writes a snapshot of what it folded since its last one. */
  async close(): Promise<void> {
    await Promise.all([...this.projections.values()].map((p) => p.close()));
  }
}
