import {
  CatalogEvent,
  CatalogState,
  DraftCatalog,
  ErrorCode,
  GrantFact,
  changesHolders,
  decideCreateWebhookSubscription,
  decideDeleteWebhookSubscription,
  decidePauseWebhookSubscription,
  evolve,
  granteeKeysOf,
  holdersWalk,
  subscriptionTakes,
} from '../src';
import { given } from './decider';
import { fold, meta, ns } from './support';

const created = (subscriptionId: string, extra: Record<string, unknown> = {}): CatalogEvent => ({
  type: 'WebhookSubscriptionCreated',
  data: { subscriptionId, url: `https://hooks.example.com/${subscriptionId}`, ...extra },
});

describe('webhook subscriptions', () => {
  it('records a subscription without its secret, and refuses what could not be delivered or would record credentials', () => {
    given()
      .when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's1', url: 'https://hooks.example.com/in', eventTypes: ['TableVersionCreated'], fromRevision: 0 }))
      .then({ type: 'WebhookSubscriptionCreated', data: { subscriptionId: 's1', url: 'https://hooks.example.com/in', eventTypes: ['TableVersionCreated'], fromRevision: 0 } });
    given().when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's', url: 'ftp://x/' })).thenFails(ErrorCode.InvalidInput, /http/);
    given().when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's', url: 'https://user:pw@x.example/' })).thenFails(ErrorCode.InvalidInput, /credentials/);
    given().when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's', url: 'not a url' })).thenFails(ErrorCode.InvalidInput);
    given().when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's', url: 'https://x.example/', eventTypes: ['Nope'] })).thenFails(ErrorCode.InvalidInput, /Nope/);
    given().when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's', url: 'https://x.example/', fromRevision: -1 })).thenFails(ErrorCode.InvalidInput);
    given(created('s1')).when((v) => decideCreateWebhookSubscription(v, { subscriptionId: 's1', url: 'https://x.example/' })).thenFails(ErrorCode.InvalidInput, /exists/);
  });

  it('folds creation, pause and deletion; a pause or deletion of what is not there records nothing', () => {
    const state = fold(new CatalogState(), [created('s1'), created('s2', { fromRevision: 0 })]);
    expect(state.webhooks.all().map((s) => [s.subscriptionId, s.status, s.createdRevision])).toEqual([
      ['s1', 'active', 0],
      ['s2', 'active', 1],
    ]);
    fold(state, decidePauseWebhookSubscription(state, 's1', 'failing for 90 s', 7));
    expect(state.webhooks.get('s1')).toMatchObject({ status: 'paused', paused: { reason: 'failing for 90 s', revision: 7 } });
    expect(decidePauseWebhookSubscription(state, 's1', 'again', 8)).toEqual([]);
    fold(state, decideDeleteWebhookSubscription(state, 's2'));
    expect(state.webhooks.get('s2')).toBeUndefined();
    expect(decideDeleteWebhookSubscription(state, 's2')).toEqual([]);
    // A snapshot's image brings them back, and a draft changes a copy only.
    const back = CatalogState.fromImage(state.toImage());
    expect(back.webhooks.all()).toEqual(state.webhooks.all());
    const draft = new DraftCatalog(state);
    evolve(draft, { event: { type: 'WebhookSubscriptionDeleted', data: { subscriptionId: 's1' } }, metadata: meta('DeleteWebhookSubscription'), revision: 9 });
    expect(draft.webhooks.size).toBe(0);
    expect(state.webhooks.size).toBe(1);
  });

  it('takes the events of its types and namespace only', () => {
    const s = { subscriptionId: 's', url: 'https://x/', eventTypes: ['TableVersionCreated', 'NamespaceCreated'], namespace: ['a'] };
    expect(subscriptionTakes(s, { type: 'TableVersionCreated', data: { table: ['a', 't'] } })).toBe(true);
    expect(subscriptionTakes(s, { type: 'TableVersionCreated', data: { table: ['b', 't'] } })).toBe(false);
    expect(subscriptionTakes(s, { type: 'NamespaceCreated', data: { namespace: ['a'] } })).toBe(true);
    expect(subscriptionTakes(s, { type: 'TableDropped', data: { table: ['a', 't'] } })).toBe(false);
    expect(subscriptionTakes({ subscriptionId: 's', url: 'https://x/' }, { type: 'TransactionAltered', data: { transactionId: 'x' } })).toBe(true);
    // Another subscription's record, filtered on the same namespace, is the database's: its URL is no news of the namespace.
    const byNamespace = { subscriptionId: 's2', url: 'https://x/', namespace: ['a'] };
    expect(subscriptionTakes(byNamespace, { type: 'WebhookSubscriptionCreated', data: { subscriptionId: 'other', url: 'https://y/', namespace: ['a'] } })).toBe(false);
    expect(subscriptionTakes(byNamespace, { type: 'TableDropped', data: { table: ['a', 't'] } })).toBe(true);
  });

  it('tells who held subscriptions as each event was recorded, folding the past only around a grant on the database', () => {
    const ritaAdmin: GrantFact = { grantee: { principal: 'rita' }, securable: { database: true }, level: 'admin' };
    const onNamespace: GrantFact = { grantee: { principal: 'rita' }, securable: { namespace: ['a'] }, level: 'admin' };
    const state = fold(new CatalogState(), [ns('a'), { type: 'GrantIssued', data: ritaAdmin }, ns('b'), { type: 'GrantRevoked', data: ritaAdmin }, ns('c'), { type: 'GrantIssued', data: onNamespace }]);
    const rita = granteeKeysOf('rita', []);
    // Before each revision 1..6: nothing yet, admin (after revision 1), and none again once revoked (at 3).
    const walk = holdersWalk(state, 1);
    expect([1, 2, 3, 4, 5, 6].map((r) => walk(r).grants.rank(rita, ['d']))).toEqual([0, 3, 3, 0, 0, 0]);
    // From any revision on, the same answers.
    const fromThree = holdersWalk(state, 3);
    expect([3, 4, 5, 6].map((r) => fromThree(r).grants.rank(rita, ['d']))).toEqual([3, 0, 0, 0]);
    // After the last grant on the database the state itself serves: a grant on a namespace decides nothing here.
    expect(holdersWalk(state, 4)(5)).toBe(state);
    expect(holdersWalk(state, 3)(3)).not.toBe(state);
    expect(changesHolders({ type: 'GrantRevoked', data: ritaAdmin })).toBe(true);
    expect(changesHolders({ type: 'GrantIssued', data: onNamespace })).toBe(false);
    expect(changesHolders({ type: 'NamespaceCreated', data: { namespace: ['d'], properties: {} } })).toBe(false);
  });
});
