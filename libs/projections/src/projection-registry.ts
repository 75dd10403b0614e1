import { EventStore } from '@app/event-store';
import { CatalogProjection } from './catalog-projection';
import { Snapshots } from './snapshots';

/** Holds one projection per database, created on first use. */
export class ProjectionRegistry {
  private readonly projections = new Map<string, CatalogProjection>();

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
    }
    return projection;
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
