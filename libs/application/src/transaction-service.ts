import { AlterTransactionAction, ObjectId, PropertyLimits, TransactionState, decideAlterTransaction, requireTransaction } from '@app/catalog';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { RequestContext } from './request-context';
import { TransactionWaiting, recordTransactionWaiting } from './transaction-status';
import { stateFor } from './request-state';

export class TransactionService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly propertyLimits?: PropertyLimits,
    /** Finds a transaction the state no longer holds in the log (see foldRecorded). */
    private readonly fromLog?: (ctx: RequestContext, id: string) => Promise<TransactionState | undefined>,
  ) {}

  async describeTransaction(ctx: RequestContext, id: string) {
    const view = await stateFor(this.projections, ctx);
    const tx = view.transaction(id) ?? (await this.fromLog?.(ctx, id)) ?? requireTransaction(view, id);
    return { status: tx.status, properties: tx.properties };
  }

  async alterTransaction(ctx: RequestContext, id: string, actions: AlterTransactionAction[]) {
    await this.writer.execute({ ...ctx }, 'AlterTransaction', (view) => ({
      events: decideAlterTransaction(view, id, actions, this.propertyLimits, true),
      result: () => undefined,
    }));
    return this.describeTransaction(ctx, id);
  }

  /** The table a job's transaction works on now: its own name may have changed since the job was queued. */
  async tableOf(ctx: RequestContext, id: string): Promise<ObjectId | undefined> {
    return (await stateFor(this.projections, ctx)).transaction(id)?.table;
  }

  /** A worker's job waits for a service that is unavailable: the transaction says why, and until when. */
  recordWaiting(ctx: RequestContext, id: string, waiting: TransactionWaiting): Promise<void> {
    return recordTransactionWaiting(this.writer, ctx, id, waiting);
  }
}
