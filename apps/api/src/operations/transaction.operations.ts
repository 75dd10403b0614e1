import { AlterTransactionAction, SET_PROPERTY_MODES, UNSET_PROPERTY_MODES, parseMode, parseTransactionStatus } from '@app/catalog';
import { alterTransactionBody, oneOf, plainBody } from '../http/body-schemas';
import { levelOfOperation, requireOperationLevel } from './batch-access';
import { operation } from './operation';

/** The spec's Transaction operations. */
export const TRANSACTION_OPERATIONS = [
  operation({
    operationId: 'DescribeTransaction',
    method: 'POST',
    path: '/v1/transaction/:id/describe',
    access: 'read',
    body: plainBody,
    subject: 'transaction',
    handle: ({ ctx, transactionId }, s) => s.transactions.describeTransaction(ctx, transactionId),
  }),
  operation({
    operationId: 'AlterTransaction',
    method: 'POST',
    path: '/v1/transaction/:id/alter',
    access: 'write',
    body: alterTransactionBody,
    subject: 'transaction',
    handle: async ({ ctx, transactionId, body, raw }, s) => {
      // Cancelling or annotating a job takes the level of the operation that asked for it (an expiry: admin).
      const recorded = (await s.transactions.describeTransaction(ctx, transactionId)).properties.operation;
      requireOperationLevel(raw, ctx.database, levelOfOperation(s.operations, recorded), `alter a transaction of ${recorded ?? 'an unknown operation'}`);
      const actions: AlterTransactionAction[] = body.actions.map((a, i) => {
        switch (oneOf(a, ['setStatusAction', 'setPropertyAction', 'unsetPropertyAction'] as const, `actions[${i}]`)) {
          case 'setStatusAction':
            return { kind: 'setStatus', status: parseTransactionStatus(a.setStatusAction!.status) };
          case 'setPropertyAction': {
            const p = a.setPropertyAction!;
            return { kind: 'setProperty', key: p.key, value: p.value, mode: parseMode(p.mode, SET_PROPERTY_MODES, 'mode', 'Overwrite') };
          }
          case 'unsetPropertyAction': {
            const u = a.unsetPropertyAction!;
            return { kind: 'unsetProperty', key: u.key, mode: parseMode(u.mode, UNSET_PROPERTY_MODES, 'mode', 'Skip') };
          }
        }
      });
      return s.transactions.alterTransaction(ctx, transactionId, actions);
    },
  }),
];
