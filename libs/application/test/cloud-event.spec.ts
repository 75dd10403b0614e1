import { toCloudEvent } from '../src/change-feed/cloud-event';

const recorded = (type: string, data: unknown, revision = 3) => ({
  id: `e${revision}`,
  streamId: 'catalog-default',
  revision,
  position: BigInt(revision + 1),
  type,
  data,
  metadata: { transactionId: 't', operation: 'Op', occurredAt: '2026-11-28T00:00:00.000Z' },
  created: new Date('2026-11-28T00:00:00Z'),
});

describe('CloudEvents of the log', () => {
  it("names as subject the table or namespace an event is about, and a subscription's own record by the subscription", () => {
    expect(toCloudEvent('default', recorded('TableVersionCreated', { table: ['a', 't'], version: 1 })).subject).toBe('a$t');
    expect(toCloudEvent('default', recorded('NamespaceCreated', { namespace: ['a'] })).subject).toBe('a');
    // Filtered on a namespace, it is still about itself, not that namespace.
    const created = toCloudEvent('default', recorded('WebhookSubscriptionCreated', { subscriptionId: 'sub-1', url: 'https://x/', namespace: ['a'] }));
    expect([created.subject, created.id, created.sequence]).toEqual(['subscriptions/sub-1', 'e3', '00000000000000000003']);
    expect(toCloudEvent('default', recorded('TransactionAltered', { transactionId: 'tx-9' })).subject).toBe('transactions/tx-9');
    // A job's progress names its table, and is about its transaction.
    expect(toCloudEvent('default', recorded('TransactionAltered', { transactionId: 'tx-9', table: ['a', 't'] })).subject).toBe('transactions/tx-9');
    // The extension's string orders as its revision does.
    expect(toCloudEvent('default', recorded('NamespaceCreated', { namespace: ['a'] }, 10)).sequence! > toCloudEvent('default', recorded('NamespaceCreated', { namespace: ['a'] }, 9)).sequence!).toBe(true);
  });
});
