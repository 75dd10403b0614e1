/**
 * The change feed's whole promise under faults (`npm run check:change-feed`, outside npm test's
 * budget): 2,000 commits through the lancedb client and HTTP on two API replicas while NATS is
 * restarted twice, the webhook receiver fails for 30 s and the publishing replica is SIGKILLed
 * (and started again). Then JetStream and the receiver hold every revision of the log, in order,
 * each CloudEvent valid and each delivery signed; a subscription created afterwards from revision 0
 * receives the whole history.
 */
import { CloudEvent } from 'cloudevents';
import { Webhook } from 'standardwebhooks';
import * as lancedb from '@lancedb/lancedb';
import { Api } from '../support/http';
import { eventually, jetStreamMessages, revisionOf } from '../support/jetstream';
import { NatsServer, startNats } from '../support/nats';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { ReceivedWebhook, WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

const STREAM = 'FEED_CHECK';
const DATABASE = 'default';
const COMMITS = Number(process.env.CHANGE_FEED_CHECK_COMMITS ?? 2000);
const RECEIVER_DOWN_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The revisions of deliveries in the order they came, reduced to first sightings: at least once means repeats may come. */
function firstSightings(sequence: number[]): { order: number[]; repeats: number } {
  const seen = new Set<number>();
  const order: number[] = [];
  for (const s of sequence) {
    if (seen.has(s)) continue;
    seen.add(s);
    order.push(s);
  }
  return { order, repeats: sequence.length - order.length };
}

const upTo = (head: number) => Array.from({ length: head + 1 }, (_, i) => i);

describe('the change feed under NATS restarts, a failing receiver and a SIGKILLed replica', () => {
  jest.setTimeout(600_000);
  const dataDir = tempDataDir();
  const prefix = `feed-check-${process.pid}-${Date.now()}`;
  let nats: NatsServer;
  let receiver: WebhookReceiver;
  const servers: RunningServer[] = [];
  const env = () => ({
    QUEUE_PREFIX: prefix,
    CHANGE_FEED_NATS_URL: nats.url,
    CHANGE_FEED_NATS_STREAM: STREAM,
    CHANGE_FEED_LEASE_SECONDS: '3',
    WEBHOOK_SECRET_KEY: 'a-check-key-of-at-least-thirty-two-characters',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_GIVE_UP_SECONDS: '600',
    DATA_PLANE_PROCESSES: '0',
    ACCESS_LOG: 'errors',
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all([nats?.stop(), receiver?.close()]);
  });

  it('holds every revision of the log in JetStream and at the receiver, in order, each CloudEvent valid', async () => {
    [nats, receiver] = await Promise.all([startNats(), startWebhookReceiver()]);
    const [a, b] = await Promise.all([startServer({ dataDir, entry: 'api', env: env() }), startServer({ dataDir, entry: 'api', env: env() })]);
    servers.push(a, b);
    const first = new Api(a.url);
    const sub = await first.post('/v1/subscriptions/create', { url: `${receiver.url}/main`, from_revision: 0 });
    expect(sub.status).toBe(200);
    const verifier = new Webhook(sub.body.secret);
    // The writers go to the replica that does not publish; the publishing one is the one killed.
    const publishes = (s: RunningServer) => s.output().includes('publishing from this replica');
    await eventually(async () => publishes(a) || publishes(b), (yes) => yes, 15_000, 100);
    const holder = publishes(a) ? a : b;
    const writer = holder === a ? b : a;
    const api = new Api(writer.url);
    expect((await api.post('/v1/namespace/load/create', {})).status).toBe(200);

    const started = Date.now();
    let commits = 0;
    const faults: string[] = [];
    const note = (what: string) => faults.push(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
    let replacement: RunningServer | undefined;
    // Every fault lands while the commits go on (they take about 10 s here); the receiver stays down 30 s.
    const nemesis = (async () => {
      await sleep(1500);
      note('NATS killed and restarted');
      await nats.restart(1000);
      note('receiver fails for 30 s');
      receiver.failing.add('*');
      const failedAt = Date.now();
      await sleep(500);
      note('publishing replica SIGKILLed');
      await holder.kill9();
      replacement = await startServer({ dataDir, entry: 'api', env: env() });
      servers.push(replacement);
      note('a replica started in its place');
      await sleep(500);
      note('NATS killed and restarted again');
      await nats.restart(1000);
      await sleep(Math.max(0, RECEIVER_DOWN_MS - (Date.now() - failedAt)));
      receiver.failing.clear();
      note('receiver answers again');
    })();

    // Half the commits by the lancedb client (each add a TableVersionCreated), half by HTTP.
    const db = await lancedb.connectNamespace('rest', { uri: writer.url });
    const tables = await Promise.all([0, 1, 2, 3].map((i) => db.createTable(`t${i}`, [{ id: 0, v: [0, 0] }], ['load'])));
    commits += 1 + tables.length;
    const clientCommits = Math.floor(COMMITS / 2);
    const lancedbWriters = tables.map(async (table, w) => {
      for (let i = w; i < clientCommits; i += tables.length) {
        await table.add([{ id: i + 1, v: [i, i] }]);
        commits++;
      }
    });
    const httpWriters = [0, 1, 2, 3].map(async (w) => {
      for (let i = w; i < COMMITS - clientCommits - 5; i += 4) {
        const r = await api.post(`/v1/table/${Api.id(['load', `h${i}`])}/declare`, {});
        expect(r.status).toBe(200);
        commits++;
      }
    });
    await Promise.all([...lancedbWriters, ...httpWriters]);
    const loadSeconds = (Date.now() - started) / 1000;
    for (const t of tables) t.close();
    db.close();
    await nemesis;

    const head = (await api.get('/v1/history/database?limit=1')).body.head as number;
    const settleStarted = Date.now();
    const messages = await eventually(
      () => jetStreamMessages(nats.url, STREAM, DATABASE),
      (m) => m.length >= head + 1,
      180_000,
      1000,
    );
    const natsSettled = (Date.now() - settleStarted) / 1000;
    const main = () => receiver.received.filter((r) => r.path === '/main');
    await eventually(async () => main(), (d) => firstSightings(d.map((r) => revisionOf(JSON.parse(r.body)))).order.length >= head + 1, 300_000, 1000);
    const webhookSettled = (Date.now() - settleStarted) / 1000;

    // JetStream: each revision once (its dedup dropped every republished one), in log order.
    expect(messages.map((m) => revisionOf(m.event))).toEqual(upTo(head));
    for (const m of messages) {
      expect(new CloudEvent(m.event as never).validate()).toBe(true);
      expect(m.msgId).toBe(m.event.id);
    }
    // The receiver: every revision, first seen in log order, each signed and valid.
    const check = (deliveries: ReceivedWebhook[]) => {
      for (const r of deliveries) {
        const event = verifier.verify(r.body, r.headers as Record<string, string>) as Record<string, unknown>;
        expect(new CloudEvent(event as never).validate()).toBe(true);
      }
      return firstSightings(deliveries.map((r) => revisionOf(JSON.parse(r.body))));
    };
    const delivered = check(main());
    expect(delivered.order).toEqual(upTo(head));

    // A subscription made now, from revision 0 of this old database, gets its whole history.
    const late = await api.post('/v1/subscriptions/create', { url: `${receiver.url}/late`, from_revision: 0 });
    const lateStarted = Date.now();
    const lateVerifier = new Webhook(late.body.secret);
    const lateDeliveries = await eventually(
      async () => receiver.received.filter((r) => r.path === '/late'),
      (d) => d.length >= head + 1,
      300_000,
      500,
    );
    const lateSeconds = (Date.now() - lateStarted) / 1000;
    for (const r of lateDeliveries) lateVerifier.verify(r.body, r.headers as Record<string, string>);
    expect(lateDeliveries.slice(0, head + 1).map((r) => revisionOf(JSON.parse(r.body)))).toEqual(upTo(head));

    console.log(
      [
        `change feed check: ${commits} commits in ${loadSeconds.toFixed(1)} s (lancedb client and HTTP), log head revision ${head}`,
        ...faults.map((f) => `  fault at ${f}`),
        `  JetStream: ${messages.length} messages, revisions 0..${head} each once and in order, ${natsSettled.toFixed(1)} s after the last fault ended until the check saw them all`,
        `  webhook: ${main().length} deliveries (${delivered.repeats} repeats), revisions 0..${head} in order, ${receiver.refused} refused while failing, ${webhookSettled.toFixed(1)} s after the last fault ended until the check saw them all`,
        `  a subscription from revision 0 made afterwards: ${lateDeliveries.length} events in ${lateSeconds.toFixed(1)} s`,
        `  published: ${head + 1} revisions reached both sinks, none lost`,
      ].join('\n'),
    );
  });
});
