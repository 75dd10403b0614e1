import { unavailableAs503 } from '@app/application';
import { operation } from './operation';

/** Audit history: extensions outside the Lance spec, read straight from the event log. */
export const HISTORY_EXTENSIONS = [
  /** A digest of the database's whole folded state: equal digests mean equal answers. */
  operation({
    extension: 'StateDigest',
    doc: { tag: 'History', summary: 'A digest of the whole catalog state, equal on every replica and after a replay.' },
    method: 'GET',
    path: '/v1/history/digest',
    access: 'read',
    body: 'none',
    subject: 'none',
    handle: async ({ ctx }, s) => {
      const projection = await unavailableAs503(() => s.projections.current(ctx.database, ctx.arrivedAt));
      return { database: ctx.database, ...(await projection.digest()) };
    },
  }),
  operation({
    extension: 'TableHistory',
    doc: { tag: 'History', summary: 'The audit trail of a table: every event, oldest first, with its transaction and principal.' },
    method: 'GET',
    path: '/v1/history/table/:id',
    access: 'read',
    body: 'none',
    subject: 'table',
    handle: ({ ctx, table, http }, s) => s.history.tableHistory(ctx, table.id, http.page()),
  }),
  operation({
    extension: 'NamespaceHistory',
    doc: { tag: 'History', summary: 'The audit trail of a namespace.' },
    method: 'GET',
    path: '/v1/history/namespace/:id',
    access: 'read',
    body: 'none',
    subject: 'namespace',
    handle: ({ ctx, namespace, http }, s) => s.history.namespaceHistory(ctx, namespace, http.page()),
  }),
  operation({
    extension: 'TransactionHistory',
    doc: { tag: 'History', summary: 'The events of one transaction.' },
    method: 'GET',
    path: '/v1/history/transaction/:id',
    access: 'read',
    body: 'none',
    subject: 'transaction',
    handle: ({ ctx, transactionId, http }, s) => s.history.transactionHistory(ctx, transactionId, http.page()),
  }),
];
