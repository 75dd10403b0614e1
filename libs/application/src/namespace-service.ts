import {
  CreateNamespaceMode,
  DropNamespaceBehavior,
  DropNamespaceMode,
  ObjectId,
  PageRequest,
  Properties,
  decideCreateNamespace,
  decideDropNamespace,
  listNamespaces,
  requireNamespace,
} from '@app/catalog';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { PurgeService } from './purge-service';
import { RequestContext } from './request-context';
import { queueScheduled, scheduledPurges } from './table-service';
import { stateFor } from './request-state';

export class NamespaceService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    /** Schedules the purge of the files of the tables a cascading drop drops; without it they are kept. */
    private readonly purges?: PurgeService,
  ) {}

  private view(ctx: RequestContext) {
    return stateFor(this.projections, ctx);
  }

  createNamespace(ctx: RequestContext, req: { id: ObjectId; mode: CreateNamespaceMode; properties: Properties }) {
    return this.writer.execute(ctx, 'CreateNamespace', (view) => ({
      events: decideCreateNamespace(view, req),
      result: (transactionId) => ({
        properties: transactionId ? req.properties : (view.namespace(req.id)?.properties ?? {}),
        ...(transactionId ? { transaction_id: transactionId } : {}),
      }),
    }));
  }

  async listNamespaces(ctx: RequestContext, id: ObjectId, page: PageRequest) {
    const view = await this.view(ctx);
    // Whoever reads the namespace reads all that is in it; otherwise only what its grants reach.
    const sees = ctx.sees && ctx.sees.rankOn({ namespace: id }) === 0 ? ctx.sees : undefined;
    const result = listNamespaces(view, id, page, sees);
    return { namespaces: result.items, page_token: result.pageToken };
  }

  async describeNamespace(ctx: RequestContext, id: ObjectId) {
    return { properties: requireNamespace(await this.view(ctx), id).properties };
  }

  async namespaceExists(ctx: RequestContext, id: ObjectId) {
    requireNamespace(await this.view(ctx), id);
    return {};
  }

  async dropNamespace(ctx: RequestContext, req: { id: ObjectId; mode: DropNamespaceMode; behavior: DropNamespaceBehavior }) {
    let scheduled: ReturnType<typeof scheduledPurges> = [];
    const answer = await this.writer.execute(ctx, 'DropNamespace', (view) => {
      const properties = view.namespace(req.id)?.properties;
      const events = decideDropNamespace(view, { ...req, purge: this.purges?.schedule() });
      scheduled = scheduledPurges(events);
      return {
        events,
        result: (transactionId) => ({
          ...(properties ? { properties } : {}),
          ...(transactionId ? { transaction_id: [transactionId] } : {}),
        }),
      };
    });
    await queueScheduled(this.purges, ctx.database, scheduled);
    return answer;
  }
}
