import { EventStore } from '@app/event-store';
import { CatalogProjection } from './catalog-projection';

/** Holds one projection per database, created on first use. */
export class ProjectionRegistry {
  private readonly projections = new Map<string, CatalogProjection>();

  constructor(private readonly store: EventStore) {}

  get(database: string): CatalogProjection {
    let projection = this.projections.get(database);
    if (!projection) {
      projection = new CatalogProjection(this.store, database);
      this.projections.set(database, projection);
    }
    return projection;
  }

  /** A projection already caught up to its stream's head. */
  async current(database: string): Promise<CatalogProjection> {
    const projection = this.get(database);
    await projection.catchUp();
    return projection;
  }

  databases(): string[] {
    return [...this.projections.keys()];
  }
}
