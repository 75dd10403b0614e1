import { ApiKeyRegistry, Authenticator, JwtVerifier } from '@app/auth';
import { CatalogEvent, CatalogState, GrantFact, WebhookSubscriptionState, evolve } from '@app/catalog';
import { subscriptionCreators } from '../src/auth/subscription-holders';

const DATABASE = 'default';
const adminBy = (grantee: GrantFact['grantee']): GrantFact => ({ grantee, securable: { database: true }, level: 'admin' });

function stateOf(...events: CatalogEvent[]): CatalogState {
  const state = new CatalogState();
  for (const event of events) {
    state.revision++;
    evolve(state, { event, metadata: { transactionId: `tx-${state.revision}`, operation: 'Test', occurredAt: '2026-01-01T00:00:00.000Z' }, revision: state.revision });
  }
  return state;
}

function authenticator(keys: Array<{ principal: string; databases: string[]; level: 'none' | 'read' | 'write' | 'admin'; roles?: string[] }>, tokens = false): Authenticator {
  return new Authenticator({
    apiKeys: new ApiKeyRegistry(keys.map((k, i) => ({ ...k, sha256: String(i).padStart(64, '0') }))),
    jwt: tokens ? new JwtVerifier({ secret: 'a-secret-of-at-least-thirty-two-characters', issuer: 'i', audience: 'a', algorithms: ['HS256'], scopePrefix: 'lance' }) : undefined,
    serviceKey: 'a-service-key-0123456789',
  });
}

const subscription = (extra: Partial<WebhookSubscriptionState>): WebhookSubscriptionState => ({
  subscriptionId: 's',
  url: 'https://hooks.example.com/in',
  createdAt: '2026-01-01T00:00:00.000Z',
  createdRevision: 0,
  status: 'active',
  ...extra,
});

describe("a webhook subscription's creator, judged as a request to create it would be", () => {
  const rita = subscription({ createdBy: 'rita', createdWith: { kind: 'api-key' } });
  const granted = stateOf({ type: 'GrantIssued', data: adminBy({ principal: 'rita' }) });
  const revoked = stateOf({ type: 'GrantIssued', data: adminBy({ principal: 'rita' }) }, { type: 'GrantRevoked', data: adminBy({ principal: 'rita' }) });

  it('holds it by a key of its principal: its level, or a grant in a database the key lists', () => {
    const byGrant = subscriptionCreators(authenticator([{ principal: 'rita', databases: [DATABASE], level: 'none' }]));
    expect(byGrant.mayHold(DATABASE, rita, granted)).toBe(true);
    expect(byGrant.mayHold(DATABASE, rita, revoked)).toBe(false);
    expect(subscriptionCreators(authenticator([{ principal: 'rita', databases: ['*'], level: 'admin' }])).mayHold(DATABASE, rita, revoked)).toBe(true);
    // A key scoped to another database is not judged by this one's grants; a removed key holds nothing.
    expect(subscriptionCreators(authenticator([{ principal: 'rita', databases: ['other'], level: 'none' }])).mayHold(DATABASE, rita, granted)).toBe(false);
    expect(subscriptionCreators(authenticator([{ principal: 'root', databases: ['*'], level: 'admin' }])).mayHold(DATABASE, rita, granted)).toBe(false);
    // One of several keys of the principal is enough, and each key's roles count.
    const roles = subscriptionCreators(
      authenticator([
        { principal: 'rita', databases: [DATABASE], level: 'read' },
        { principal: 'rita', databases: [DATABASE], level: 'none', roles: ['ops'] },
      ]),
    );
    expect(roles.mayHold(DATABASE, rita, stateOf({ type: 'GrantIssued', data: adminBy({ role: 'ops' }) }))).toBe(true);
    expect(roles.mayHold(DATABASE, rita, revoked)).toBe(false);
  });

  it('holds it by what its token carried while tokens are accepted, and by the grants to its name and roles', () => {
    const tokens = subscriptionCreators(authenticator([], true));
    const byScope = subscription({ createdBy: 'tom', createdWith: { kind: 'token', level: 'admin', roles: [] } });
    const byRole = subscription({ createdBy: 'tom', createdWith: { kind: 'token', level: 'read', roles: ['ops'] } });
    const opsAdmin = stateOf({ type: 'GrantIssued', data: adminBy({ role: 'ops' }) });
    expect(tokens.mayHold(DATABASE, byScope, new CatalogState())).toBe(true);
    expect(tokens.mayHold(DATABASE, byRole, opsAdmin)).toBe(true);
    expect(tokens.mayHold(DATABASE, byRole, new CatalogState())).toBe(false);
    expect(subscriptionCreators(authenticator([{ principal: 'root', databases: ['*'], level: 'admin' }])).mayHold(DATABASE, byScope, opsAdmin)).toBe(false);
  });

  it("holds one made without authentication only while there is none; one made before credentials were recorded by its principal's keys", () => {
    const anonymous = subscription({});
    expect(subscriptionCreators(authenticator([])).mayHold(DATABASE, anonymous, new CatalogState())).toBe(true);
    expect(subscriptionCreators(authenticator([{ principal: 'root', databases: ['*'], level: 'admin' }])).mayHold(DATABASE, anonymous, new CatalogState())).toBe(false);
    const earlier = subscription({ createdBy: 'rita' });
    const keys = subscriptionCreators(authenticator([{ principal: 'rita', databases: [DATABASE], level: 'none' }]));
    expect(keys.mayHold(DATABASE, earlier, granted)).toBe(true);
    expect(keys.mayHold(DATABASE, earlier, revoked)).toBe(false);
    expect(subscriptionCreators(authenticator([], true)).mayHold(DATABASE, earlier, granted)).toBe(true);
    // With no key of its name left, a token of its name is judged by the grants alone: a revoke still counts.
    expect(subscriptionCreators(authenticator([], true)).mayHold(DATABASE, earlier, revoked)).toBe(false);
    expect(subscriptionCreators(authenticator([{ principal: 'root', databases: ['*'], level: 'admin' }])).mayHold(DATABASE, subscription({ createdBy: 'catalog-service' }), new CatalogState())).toBe(false);
  });
});
