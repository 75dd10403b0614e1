import { AlterTransactionAction, Properties, TERMINAL_STATUSES, TransactionStatus, decideAlterTransaction, requireTransaction } from '@app/catalog';
import { CatalogWriter } from './catalog-writer';
import { RequestContext } from './request-context';

/** What a job waiting out an unavailable service says in its transaction, until its next status record. */
export const WAITING_PROPERTIES = ['waiting_reason', 'waiting_since', 'next_attempt_at'] as const;

export interface TransactionWaiting {
  reason: string;
  since: Date;
  nextAttemptAt: Date;
}

/**
 * A worker's record of where its transaction stands: the status and the properties that go with it.
 * A status record ends any wait the transaction was in.
 */
export async function recordTransactionStatus(
  writer: CatalogWriter,
  ctx: RequestContext,
  transactionId: string,
  status: TransactionStatus,
  properties: Properties = {},
): Promise<void> {
  const actions: AlterTransactionAction[] = [
    { kind: 'setStatus', status },
    ...Object.entries(properties).map(([key, value]) => ({ kind: 'setProperty' as const, key, value, mode: 'Overwrite' as const })),
    ...WAITING_PROPERTIES.filter((key) => !(key in properties)).map((key) => ({ kind: 'unsetProperty' as const, key, mode: 'Skip' as const })),
  ];
  await writer.execute(ctx, 'AlterTransaction', (view) => ({
    events: decideAlterTransaction(view, transactionId, actions),
    result: () => undefined,
  }));
}

/** A job's record that it waits for an unavailable service; a transaction already final keeps its last word. */
export async function recordTransactionWaiting(writer: CatalogWriter, ctx: RequestContext, transactionId: string, waiting: TransactionWaiting): Promise<void> {
  const properties: Properties = {
    waiting_reason: waiting.reason.slice(0, 1000),
    waiting_since: waiting.since.toISOString(),
    next_attempt_at: waiting.nextAttemptAt.toISOString(),
  };
  const actions = Object.entries(properties).map(([key, value]): AlterTransactionAction => ({ kind: 'setProperty', key, value, mode: 'Overwrite' }));
  await writer.execute(ctx, 'AlterTransaction', (view) => ({
    events: TERMINAL_STATUSES.has(requireTransaction(view, transactionId).status) ? [] : decideAlterTransaction(view, transactionId, actions),
    result: () => undefined,
  }));
}
