import { CloudEvent } from 'cloudevents';
import { Webhook } from 'standardwebhooks';
import * as lancedb from '@lancedb/lancedb';
import { Api } from '../support/http';
import { StoredMessage, eventually, jetStreamMessages, revisionOf } from '../support/jetstream';
import { NatsServer, startNats } from '../support/nats';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { lanceCatalog } from '../support/operator';
import { createTestDatabase } from '../support/postgres';
import { WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

const STREAM = 'FEED_TEST';
const DATABASE = 'default';

/** The CloudEvents a receiver holds for one path, parsed (and checked against the spec by the package). */
function delivered(receiver: WebhookReceiver, path: string) {
  return receiver.received.filter((r) => r.path === path);
}

/** Revisions 0..head, each exactly once and in order, whatever repeats at-least-once delivery added. */
function inOrderOnce(revisions: number[]): number[] {
  const out: number[] = [];
  for (const r of revisions) if (r === out.length) out.push(r);
  else if (r >= out.length) return [...out, -r];
  return out;
}

describe('the change feed: CloudEvents to NATS JetStream and to webhooks', () => {
  const dataDir = tempDataDir();
  let nats: NatsServer;
  let receiver: WebhookReceiver;
  let a: RunningServer;
  let b: RunningServer;
  let api: Api;
  // Replicas of one deployment share QUEUE_PREFIX: the change feed's leases and checkpoints live under it.
  const prefix = `feed-${process.pid}-${Date.now()}`;
  const env = () => ({
    QUEUE_PREFIX: prefix,
    CHANGE_FEED_NATS_URL: nats.url,
    CHANGE_FEED_NATS_STREAM: STREAM,
    CHANGE_FEED_LEASE_SECONDS: '1',
    WEBHOOK_SECRET_KEY: 'a-test-key-of-at-least-thirty-two-characters',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_GIVE_UP_SECONDS: '3',
    DATA_PLANE_PROCESSES: '0',
  });

  const head = async () => (await api.get('/v1/history/database?limit=1')).body.head as number;
  const stored = () => jetStreamMessages(nats.url, STREAM, DATABASE);
  const allStored = async () => {
    const h = await head();
    return eventually(stored, (m) => inOrderOnce(m.map((x) => revisionOf(x.event))).length === h + 1, 30_000);
  };

  beforeAll(async () => {
    [nats, receiver] = await Promise.all([startNats(), startWebhookReceiver()]);
    [a, b] = await Promise.all([startServer({ dataDir, entry: 'api', env: env() }), startServer({ dataDir, entry: 'api', env: env() })]);
    api = new Api(a.url);
  });

  afterAll(async () => {
    if (process.env.FEED_DEBUG) console.log(a.output().split('\n').filter((l) => l.includes('change-feed')).join('\n'), '\n-----\n', b.output().split('\n').filter((l) => l.includes('change-feed')).join('\n'));
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([nats?.stop(), receiver?.close()]);
  });

  let secret: string;

  it('publishes every event of the log to JetStream as a valid CloudEvent, in order, with its id as Nats-Msg-Id', async () => {
    expect((await api.post('/v1/namespace/feed/create', {})).status).toBe(200);
    const db = await lancedb.connectNamespace('rest', { uri: a.url });
    const table = await db.createTable('t', [{ id: 1, v: [1, 2] }], ['feed']);
    for (let i = 2; i <= 4; i++) await table.add([{ id: i, v: [i, i] }]);
    table.close();
    db.close();
    const messages = await allStored();
    const h = await head();
    expect(messages.map((m) => revisionOf(m.event))).toEqual(Array.from({ length: h + 1 }, (_, i) => i));
    const history = (await api.get(`/v1/history/database?limit=1000`)).body.events as Array<{ revision: number; type: string; transaction_id: string }>;
    for (const m of messages) {
      const event = new CloudEvent(m.event as never);
      expect(event.validate()).toBe(true);
      const entry = history[revisionOf(m.event)];
      expect(m.event).toMatchObject({
        specversion: '1.0',
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        source: `/databases/${DATABASE}`,
        type: `lance.catalog.${entry.type}`,
        datacontenttype: 'application/json',
      });
      expect((m.event.data as { transaction_id: string }).transaction_id).toBe(entry.transaction_id);
      expect(m.msgId).toBe(m.event.id);
      expect(m.subject).toBe(`lance.catalog.${DATABASE}.${entry.type}`);
      expect(m.contentType).toBe('application/cloudevents+json');
    }
    // Each event its own id: the log's id of the event, never its revision (see the recover test below).
    expect(new Set(messages.map((m) => m.event.id)).size).toBe(messages.length);
    const version = messages.find((m) => m.event.type === 'lance.catalog.TableVersionCreated')!;
    expect(version.event.subject).toBe('feed$t');
    expect(typeof version.event.time).toBe('string');
  });

  it('delivers a subscription created from revision 0 the whole history, signed per Standard Webhooks, in order', async () => {
    const created = await api.post('/v1/subscriptions/create', { url: `${receiver.url}/all`, from_revision: 0 });
    expect(created.status).toBe(200);
    expect(created.body.secret).toMatch(/^whsec_/);
    secret = created.body.secret;
    const h = await head();
    const got = await eventually(async () => delivered(receiver, '/all'), (d) => d.length >= h + 1);
    const verifier = new Webhook(secret);
    const revisions = got.map((r) => {
      const event = verifier.verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>;
      expect(new CloudEvent(event as never).validate()).toBe(true);
      expect(r.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
      expect(r.headers['webhook-id']).toBe(event.id);
      return revisionOf(event);
    });
    expect(revisions.slice(0, h + 1)).toEqual(Array.from({ length: h + 1 }, (_, i) => i));
    // A signature made with another secret does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got[0].body, got[0].headers as Record<string, string>)).toThrow();
    // The secret is answered once: never listed, described or in the log.
    const listed = await api.post('/v1/subscriptions/list', {});
    expect(listed.body.subscriptions.map((s: { url: string }) => s.url)).toContain(`${receiver.url}/all`);
    expect((await api.post('/v1/subscriptions/list?limit=1', {})).body.page_token).toBeNull();
    expect((await api.post('/v1/subscriptions/list', { id: ['ns'] })).status).toBe(400);
    const log = (await api.get('/v1/history/database?limit=1000')).text;
    expect(log).toContain('WebhookSubscriptionCreated');
    expect(log + listed.text).not.toContain(secret.slice(6));
  });

  it('retries while the receiver fails, then delivers everything in order; describe tells the lag and the last error', async () => {
    const created = await api.post('/v1/subscriptions/create', { url: `${receiver.url}/flaky`, event_types: ['NamespaceCreated'] });
    const id = created.body.subscription_id as string;
    receiver.failing.add('/flaky');
    for (let i = 0; i < 3; i++) expect((await api.post(`/v1/namespace/flaky${i}/create`, {})).status).toBe(200);
    const failing = await eventually(
      () => api.post('/v1/subscriptions/describe', { subscription_id: id }),
      (r) => r.body.last_error !== undefined,
    );
    expect(failing.body).toMatchObject({ status: 'active', last_error: expect.stringContaining('500') });
    expect(failing.body.lag_events).toBeGreaterThan(0);
    expect(receiver.refused).toBeGreaterThan(0);
    receiver.failing.delete('/flaky');
    const got = await eventually(async () => delivered(receiver, '/flaky'), (d) => d.length >= 3);
    expect(got.map((r) => JSON.parse(r.body).data.data.namespace[0])).toEqual(['flaky0', 'flaky1', 'flaky2']);
    const caughtUp = await eventually(
      () => api.post('/v1/subscriptions/describe', { subscription_id: id }),
      (r) => r.body.last_error === undefined && r.body.lag_events === 0,
    );
    expect(caughtUp.body).toMatchObject({ lag_events: 0, status: 'active' });
  });

  it("gives a namespace's subscription the progress of its tables' jobs, and not of other namespaces' jobs", async () => {
    const created = await api.post('/v1/subscriptions/create', { url: `${receiver.url}/jobs`, namespace: ['jobs'], event_types: ['TableIndexRequested', 'TransactionAltered'] });
    expect(created.status).toBe(200);
    const db = await lancedb.connectNamespace('rest', { uri: a.url });
    const requested: string[] = [];
    for (const namespace of ['jobs', 'not-jobs']) {
      expect((await api.post(`/v1/namespace/${namespace}/create`, {})).status).toBe(200);
      (await db.createTable('t', [{ id: 1, v: [1, 2] }], [namespace])).close();
      // No worker runs here: the job stays queued, and the caller's change of its transaction is its progress.
      const index = await api.post(`/v1/table/${namespace}%24t/create_index`, { column: 'id', index_type: 'BTREE', name: 'by_id' });
      expect(index.status).toBe(200);
      requested.push(index.body.transaction_id);
      expect((await api.post(`/v1/transaction/${index.body.transaction_id}/alter`, { actions: [{ setPropertyAction: { key: 'reviewed', value: namespace } }] })).status).toBe(200);
    }
    db.close();
    const got = await eventually(async () => delivered(receiver, '/jobs'), (d) => d.length >= 2, 10_000);
    // Once the subscription has gone through the log's head, the other namespace's events were passed over, not pending.
    const caughtUp = await eventually(() => api.post('/v1/subscriptions/describe', { subscription_id: created.body.subscription_id }), (r) => r.body.lag_events === 0, 10_000);
    expect(caughtUp.body.lag_events).toBe(0);
    const events = delivered(receiver, '/jobs').map((r) => JSON.parse(r.body));
    expect(events.map((e) => [e.type, e.subject])).toEqual([
      ['lance.catalog.TableIndexRequested', 'jobs$t'],
      ['lance.catalog.TransactionAltered', `transactions/${requested[0]}`],
    ]);
    expect(got[1] && JSON.parse(got[1].body).data.data).toMatchObject({ transactionId: requested[0], table: ['jobs', 't'], setProperties: { reviewed: 'jobs' } });
    // The history routes keep a job's progress in its transaction's history, not in its table's or namespace's.
    for (const scope of ['namespace/jobs', 'table/jobs%24t']) {
      const types = (await api.get(`/v1/history/${scope}?limit=1000`)).body.events.map((e: { type: string }) => e.type);
      expect(types).toContain('TableIndexRequested');
      expect(types).not.toContain('TransactionAltered');
    }
    expect((await api.get(`/v1/history/transaction/${requested[0]}`)).body.events.map((e: { type: string }) => e.type)).toEqual(['TableIndexRequested', 'TransactionAltered']);
  });

  it('pauses a subscription whose receiver fails for longer than WEBHOOK_GIVE_UP_SECONDS, and says so', async () => {
    receiver.failing.add('/down');
    const created = await api.post('/v1/subscriptions/create', { url: `${receiver.url}/down`, from_revision: 0 });
    const id = created.body.subscription_id as string;
    const paused = await eventually(() => api.post('/v1/subscriptions/describe', { subscription_id: id }), (r) => r.body.status === 'paused', 20_000);
    expect(paused.body.paused).toMatchObject({ revision: 0, reason: expect.stringContaining('WEBHOOK_GIVE_UP_SECONDS') });
    const history = (await api.get('/v1/history/database?limit=1000')).body.events as Array<{ type: string; data: { subscriptionId?: string } }>;
    expect(history.some((e) => e.type === 'WebhookSubscriptionPaused' && e.data.subscriptionId === id)).toBe(true);
    expect((await api.post('/v1/subscriptions/delete', { subscription_id: id })).status).toBe(200);
    expect((await api.post('/v1/subscriptions/describe', { subscription_id: id })).status).toBe(400);
  });

  it('resumes after NATS restarts and after the publishing replica is SIGKILLed, with no gap and no duplicate message', async () => {
    await nats.restart();
    for (let i = 0; i < 5; i++) expect((await api.post(`/v1/namespace/after-nats${i}/create`, {})).status).toBe(200);
    await allStored();
    // Whichever replica publishes is killed; the other takes the lease over once it runs out.
    const holder = /change feed of 'default': publishing from this replica/.test(a.output()) ? a : b;
    const other = holder === a ? b : a;
    api = new Api(other.url);
    await holder.kill9();
    const writes = Array.from({ length: 20 }, (_, i) => api.post(`/v1/namespace/after-kill${i}/create`, {}));
    expect((await Promise.all(writes)).map((r) => r.status)).toEqual(Array(20).fill(200));
    await nats.restart();
    const messages = await allStored();
    const h = await head();
    // JetStream dropped every republished message as a duplicate: each revision once, in order.
    expect(messages.map((m: StoredMessage) => revisionOf(m.event))).toEqual(Array.from({ length: h + 1 }, (_, i) => i));
    const all = await eventually(async () => delivered(receiver, '/all'), (d) => inOrderOnce(d.map((r) => revisionOf(JSON.parse(r.body)))).length === h + 1);
    expect(inOrderOnce(all.map((r) => revisionOf(JSON.parse(r.body))))).toHaveLength(h + 1);
    // Another database's events go to its own subjects, and never to this database's subscriptions.
    expect((await api.post('/v1/namespace/theirs/create', {}, { 'x-lance-database': 'elsewhere' })).status).toBe(200);
    const theirs = await eventually(() => jetStreamMessages(nats.url, STREAM, 'elsewhere'), (m) => m.length === 1);
    expect(theirs.map((m) => [m.subject, revisionOf(m.event), m.event.source])).toEqual([['lance.catalog.elsewhere.NamespaceCreated', 0, '/databases/elsewhere']]);
    expect(messages.map((m) => m.event.id)).not.toContain(theirs[0].event.id);
    expect(receiver.received.some((r) => JSON.parse(r.body).source !== `/databases/${DATABASE}`)).toBe(false);
    const metrics = (await api.get('/metrics')).text;
    expect(metrics).toMatch(/lance_catalog_change_feed_lag_events\{sink="nats"\} 0/);
    expect(metrics).toMatch(/lance_catalog_change_feed_published_total\{sink="webhook"\} \d+/);
  });

  it('goes on at once after the log moves to another event store (lance-catalog migrate), whose positions are not the old ones', async () => {
    const before = await head();
    const target = await createTestDatabase('feed');
    try {
      // As README runs it: while the replicas serve, whose feed then follows the old log past the
      // operator's own events (the write freeze), which the new log does not hold.
      const migrated = await lanceCatalog(['migrate', '--to', target.url], { EVENT_STORE: 'embedded', DATA_DIR: dataDir });
      expect(migrated.code).toBe(0);
      await new Promise((r) => setTimeout(r, 2500));
      await Promise.all([a.stop(), b.stop()]);
      a = await startServer({ dataDir, entry: 'api', env: { ...env(), EVENT_STORE: target.url } });
      b = a;
      api = new Api(a.url);
      expect(await head()).toBe(before);
      // Once the replica publishes and has read its streams up to their heads, a new event reaches it only through the log's subscription.
      await a.outputMatching("change feed of 'default': publishing from this replica", 10_000);
      await new Promise((r) => setTimeout(r, 500));
      expect((await api.post('/v1/namespace/moved0/create', {})).status).toBe(200);
      // The first event after the move is published without waiting for later ones to push it out.
      const messages = await eventually(stored, (m) => m.some((x) => revisionOf(x.event) === before + 1), 5_000);
      expect(inOrderOnce(messages.map((x) => revisionOf(x.event)))).toHaveLength(before + 2);
      const hooks = await eventually(async () => delivered(receiver, '/all'), (d) => d.some((r) => revisionOf(JSON.parse(r.body)) === before + 1), 5_000);
      expect(hooks.some((r) => revisionOf(JSON.parse(r.body)) === before + 1)).toBe(true);
    } finally {
      await a.stop();
      await target.drop();
    }
  });

  it('goes on from the head of a log rebuilt from the warehouse, whose revisions are behind the checkpoints', async () => {
    const rebuilt = await createTestDatabase('feedrecover');
    try {
      expect((await lanceCatalog(['recover', '--from-warehouse'], { EVENT_STORE: rebuilt.url, DATA_DIR: dataDir })).code).toBe(0);
      a = b = await startServer({ dataDir, entry: 'api', env: { ...env(), EVENT_STORE: rebuilt.url } });
      api = new Api(a.url);
      // Logged once the runner has read the projection, its checkpoint and the log's head: after the lease's line.
      expect(await a.outputMatching(/nats of default was checkpointed at revision \d+, past this log's head/, 10_000)).toMatch(/nats of default was checkpointed at revision \d+, past this log's head/);
      const before = await stored();
      expect((await api.post('/v1/namespace/rebuilt0/create', {})).status).toBe(200);
      const published = () => api.get('/metrics').then((m) => Number(/lance_catalog_change_feed_published_total\{sink="nats"\} (\d+)/.exec(m.text)?.[1] ?? 0));
      expect(await eventually(published, (n) => n === 1, 5_000)).toBe(1);
      expect((await api.get('/metrics')).text).toMatch(/lance_catalog_change_feed_lag_events\{sink="nats"\} 0/);
      // Its revision is one the old log's events had: JetStream keeps it all the same, as an event of its own.
      const isNew = (m: StoredMessage) => (m.event.data as { data: { namespace?: string[] } }).data.namespace?.[0] === 'rebuilt0';
      const after = await eventually(stored, (m) => m.some(isNew), 5_000);
      expect(after.filter(isNew)).toHaveLength(1);
      const rebuilt0 = after.find(isNew)!;
      expect(revisionOf(rebuilt0.event)).toBeLessThanOrEqual(Math.max(...before.map((m) => revisionOf(m.event))));
      expect(before.map((m) => m.event.id)).not.toContain(rebuilt0.event.id);
      expect(after).toHaveLength(before.length + 1);

      // The checkpoint was put back to this log's head, not left past it: what is recorded while
      // NATS is down, and then the replica restarts, is published once both are back.
      await nats.stop();
      for (const name of ['rebuilt1', 'rebuilt2']) expect((await api.post(`/v1/namespace/${name}/create`, {})).status).toBe(200);
      await a.stop();
      await nats.start();
      a = b = await startServer({ dataDir, entry: 'api', env: { ...env(), EVENT_STORE: rebuilt.url } });
      api = new Api(a.url);
      const names = (m: StoredMessage[]) => m.map((x) => (x.event.data as { data: { namespace?: string[] } }).data.namespace?.[0]);
      const later = await eventually(stored, (m) => names(m).includes('rebuilt2'), 20_000);
      expect(names(later).filter((n) => n?.startsWith('rebuilt'))).toEqual(['rebuilt0', 'rebuilt1', 'rebuilt2']);
    } finally {
      await a.stop();
      await rebuilt.drop();
    }
  });
});
