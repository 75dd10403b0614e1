import type { CatalogState } from '@app/catalog';
import type { ProjectionRegistry } from '@app/projections';
import { unavailableAs503 } from './catalog-writer';
import { RequestContext } from './request-context';

/**
 * The database's state as a request reads it: with every write acknowledged before the request
 * arrived (a head read begun after then, shared or its own), 503 code 17 when the store is away.
 */
export function stateFor(projections: ProjectionRegistry, ctx: RequestContext): Promise<CatalogState> {
  return unavailableAs503(() => projections.current(ctx.database, ctx.arrivedAt)).then((p) => p.state);
}
