import { AlterTransactionAction, PropertyLimits, decideAlterTransaction, requireTransaction } from '@app/catalog';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter, unavailableAs503 } from './catalog-writer';
import { RequestContext } from './request-context';

export class TransactionService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly propertyLimits?: PropertyLimits,
  ) {}

  async describeTransaction(ctx: RequestContext, id: string) {
    const view = (await unavailableAs503(() => this.projections.current(ctx.database))).state;
    const tx = requireTransaction(view, id);
    return { status: tx.status, properties: tx.properties };
  }

  async alterTransaction(ctx: RequestContext, id: string, actions: AlterTransactionAction[]) {
    await this.writer.execute({ ...ctx }, 'AlterTransaction', (view) => ({
      events: decideAlterTransaction(view, id, actions, this.propertyLimits),
      result: () => undefined,
    }));
    return this.describeTransaction(ctx, id);
  }
}
