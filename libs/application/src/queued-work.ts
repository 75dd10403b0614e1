import { CatalogError, CatalogEvent, CatalogView, ErrorCode, ObjectId, requireTable, requireTransaction } from '@app/catalog';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { RequestContext } from './request-context';
import { TransactionJobQueue } from './transaction-job-queue.port';
import { recordTransactionStatus } from './transaction-status';
import { stateFor } from './request-state';

/**
 * Records a request for a worker's work (index build, backfill, view refresh) as a Queued
 * transaction and queues its job. The queue is asked first, so a Redis outage answers 503 with
 * nothing recorded; a job that cannot be queued after the append marks its transaction Failed.
 */
export async function queueTransactionWork<J>(
  writer: CatalogWriter,
  queue: TransactionJobQueue<J>,
  ctx: RequestContext,
  work: { operation: string; what: string; decide: (view: CatalogView) => CatalogEvent[]; job: (transactionId: string, events: CatalogEvent[]) => J },
): Promise<{ transactionId: string; events: CatalogEvent[] }> {
  const unavailable = () => new CatalogError(ErrorCode.ServiceUnavailable, `the ${work.what} queue is unavailable; retry later`);
  await queue.ping().catch(() => {
    throw unavailable();
  });
  const recorded = await writer.execute(ctx, work.operation, (view) => {
    const events = work.decide(view);
    return { events, result: (id) => ({ transactionId: id!, events }) };
  });
  try {
    await queue.enqueue(work.job(recorded.transactionId, recorded.events));
  } catch (e) {
    await recordTransactionStatus(writer, ctx, recorded.transactionId, 'Failed', { reason: `the ${work.what} could not be queued: ${(e as Error).message}` });
    throw unavailable();
  }
  return recorded;
}

/** The table a worker's job works on and where its transaction stands now. */
export async function transactionWorkOf(projections: ProjectionRegistry, ctx: RequestContext, id: ObjectId, transactionId: string) {
  const view = await stateFor(projections, ctx);
  return { table: requireTable(view, id), status: requireTransaction(view, transactionId).status };
}
