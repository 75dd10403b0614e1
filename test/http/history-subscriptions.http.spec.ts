import { createHash } from 'node:crypto';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { root: 'sub-root-key-0123456789', rita: 'sub-rita-key-0123456789', cleo: 'sub-cleo-key-0123456789' };
const API_KEYS = JSON.stringify([
  { principal: 'root', sha256: sha256(KEYS.root), databases: ['*'], level: 'admin' },
  { principal: 'rita', sha256: sha256(KEYS.rita), databases: ['default'], level: 'none' },
  { principal: 'cleo', sha256: sha256(KEYS.cleo), databases: ['default'], level: 'write' },
]);
const SECRET_IN_URL = 'receiver-token-in-the-url';

/** A subscription's URL often carries its receiver's secret: the log shows it to the database's admins only, as SubscriptionsList does. */
describe("webhook subscriptions' events in the histories", () => {
  let server: RunningServer;
  let root: Api, rita: Api, cleo: Api;
  let transaction: string;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { AUTH_API_KEYS: API_KEYS, WEBHOOK_SECRET_KEY: 'a-subscription-key-of-at-least-thirty-two-characters', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    [root, rita, cleo] = [KEYS.root, KEYS.rita, KEYS.cleo].map((k) => new Api(server.url, { 'x-api-key': k }));
    expect((await root.post('/v1/namespace/features/create', {})).status).toBe(200);
    expect((await root.post('/v1/grants/create', { grantee: { principal: 'rita' }, securable: { namespace: ['features'] }, level: 'read' })).status).toBe(200);
    const created = await root.post('/v1/subscriptions/create', { url: `http://127.0.0.1:9/in?token=${SECRET_IN_URL}`, namespace: ['features'] });
    expect(created.status).toBe(200);
    const history = await root.get('/v1/history/database?limit=100');
    transaction = history.body.events.find((e: { type: string }) => e.type === 'WebhookSubscriptionCreated').transaction_id;
  }, 60_000);
  afterAll(() => server?.stop());

  it('shows them to an admin of the database', async () => {
    for (const path of ['/v1/history/database?limit=100', '/v1/history/namespace/features', `/v1/history/transaction/${transaction}`]) {
      expect((await root.get(path)).text).toContain(SECRET_IN_URL);
    }
  });

  it('keeps them from a reader of the namespace by grants and from a writer by its key', async () => {
    for (const caller of [rita, cleo]) {
      expect((await caller.post('/v1/subscriptions/list', {})).status).toBe(403);
      const database = await caller.get('/v1/history/database?limit=100');
      expect(database.status).toBe(200);
      expect(database.body.events.map((e: { type: string }) => e.type)).toContain('NamespaceCreated');
      const namespace = await caller.get('/v1/history/namespace/features');
      expect(namespace.status).toBe(200);
      expect(database.text + namespace.text).not.toContain(SECRET_IN_URL);
      expect((await caller.get(`/v1/history/transaction/${transaction}`)).status).toBe(404);
    }
  });
});
