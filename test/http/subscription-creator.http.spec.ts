import { createHash } from 'node:crypto';
import { Api } from '../support/http';
import { eventually } from '../support/jetstream';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { root: 'creator-root-key-0123456789', rita: 'creator-rita-key-0123456789' };
const ROOT_KEY = { principal: 'root', sha256: sha256(KEYS.root), databases: ['*'], level: 'admin' };
const RITA_KEY = { principal: 'rita', sha256: sha256(KEYS.rita), databases: ['default'], level: 'none' };
const RITA_ADMIN = { grantee: { principal: 'rita' }, securable: { database: true }, level: 'admin' };

/**
 * A subscription sees every event of its database: it is delivered only while its creator is an
 * admin of the database, as creating it needs. `rita` holds no level of her own: a grant makes her
 * an admin, and revoking it (or removing her key) suspends her subscription.
 */
describe('a webhook subscription whose creator is no longer an admin of the database', () => {
  const dataDir = tempDataDir();
  let receiver: WebhookReceiver;
  let server: RunningServer;
  let root: Api, rita: Api;
  let subscription: string;
  const env = (keys: unknown[]) => ({
    AUTH_API_KEYS: JSON.stringify(keys),
    QUEUE_PREFIX: `creator-${process.pid}-${Date.now()}`,
    CHANGE_FEED_LEASE_SECONDS: '1',
    WEBHOOK_SECRET_KEY: 'a-creator-test-key-of-at-least-thirty-two-characters',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    DATA_PLANE_PROCESSES: '0',
  });
  const settings = env([ROOT_KEY, RITA_KEY]);
  const start = async (keys: unknown[]) => {
    server = await startServer({ dataDir, entry: 'api', env: { ...settings, AUTH_API_KEYS: JSON.stringify(keys) } });
    [root, rita] = [KEYS.root, KEYS.rita].map((k) => new Api(server.url, { 'x-api-key': k }));
  };
  const namespaces = () => receiver.received.filter((r) => r.path === '/rita').map((r) => JSON.parse(r.body).data.data.namespace[0] as string);
  const describe_ = () => root.post('/v1/subscriptions/describe', { subscription_id: subscription });
  /** Once the feed has gone through the log's head: what was not delivered by then was passed over. */
  const caughtUp = () => eventually(describe_, (r) => r.body.lag_events === 0, 10_000);
  const created = async (name: string) => expect((await root.post(`/v1/namespace/${name}/create`, {})).status).toBe(200);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    await start([ROOT_KEY, RITA_KEY]);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  it('passes over the events recorded while its admin grant is revoked, says why and what to do, and delivers again once it is made again', async () => {
    expect((await root.post('/v1/grants/create', RITA_ADMIN)).status).toBe(200);
    const made = await rita.post('/v1/subscriptions/create', { url: `${receiver.url}/rita`, event_types: ['NamespaceCreated'] });
    expect(made.status).toBe(200);
    subscription = made.body.subscription_id;
    await created('before');
    expect(await eventually(async () => namespaces(), (n) => n.includes('before'))).toEqual(['before']);

    expect((await root.post('/v1/grants/revoke', RITA_ADMIN)).status).toBe(200);
    expect((await rita.post('/v1/subscriptions/describe', { subscription_id: subscription })).status).toBe(403);
    await created('while-revoked');
    const suspended = await caughtUp();
    expect(namespaces()).toEqual(['before']);
    expect(suspended.body).toMatchObject({
      status: 'suspended',
      created_by: 'rita',
      lag_events: 0,
      suspended: {
        reason: expect.stringContaining("its creator 'rita' is no longer an admin of database 'default'"),
        to_resume: expect.stringMatching(/'rita' is made an admin of the database again.*deletes it and creates it again/),
      },
    });
    const listed = await root.post('/v1/subscriptions/list', {});
    expect(listed.body.subscriptions.find((s: { subscription_id: string }) => s.subscription_id === subscription)).toMatchObject({ status: 'suspended' });
    expect(await server.outputMatching(/webhook:\S+ is suspended: its creator 'rita' is no longer an admin/)).toBeTruthy();

    expect((await root.post('/v1/grants/create', RITA_ADMIN)).status).toBe(200);
    await created('after');
    expect(await eventually(async () => namespaces(), (n) => n.includes('after'))).toEqual(['before', 'after']);
    const resumed = await caughtUp();
    expect(resumed.body.status).toBe('active');
    expect(resumed.body.suspended).toBeUndefined();
    // Passed over, not kept for later: nothing recorded while she was no admin came after all.
    await new Promise((r) => setTimeout(r, 500));
    expect(namespaces()).toEqual(['before', 'after']);
  });

  it('suspends it when its creator key is removed, though the grant to its principal stays', async () => {
    await server.stop();
    await start([ROOT_KEY]);
    await created('key-removed');
    const suspended = await caughtUp();
    expect(suspended.body).toMatchObject({ status: 'suspended', suspended: { reason: expect.stringContaining("'rita' is no longer an admin") } });
    expect(namespaces()).toEqual(['before', 'after']);
  });
});
