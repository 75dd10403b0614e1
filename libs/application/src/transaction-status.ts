import { AlterTransactionAction, Properties, TransactionStatus, decideAlterTransaction } from '@app/catalog';
import { CatalogWriter } from './catalog-writer';
import { RequestContext } from './request-context';

/** A worker's record of where its transaction stands: the status and the properties that go with it. */
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
  ];
  await writer.execute(ctx, 'AlterTransaction', (view) => ({
    events: decideAlterTransaction(view, transactionId, actions),
    result: () => undefined,
  }));
}
