import { Api } from '../support/http';
import { eventually, jetStreamMessages, revisionOf } from '../support/jetstream';
import { NatsServer, startNats } from '../support/nats';
import { RunningServer, startServer } from '../support/server';

const STREAM = 'LARGE_EVENTS';
const MAX_PAYLOAD = 8192;

/**
 * An event larger than NATS takes (its max_payload; a RegisterTable of a table with thousands of
 * versions lists them all) is published as a CloudEvent that says so, in its place, and the feed
 * goes on: before, the batch holding it was sent again forever and nothing after it was published.
 */
describe('the change feed with an event larger than NATS takes', () => {
  let nats: NatsServer;
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    nats = await startNats({ maxPayload: MAX_PAYLOAD });
    server = await startServer({ entry: 'api', env: { CHANGE_FEED_NATS_URL: nats.url, CHANGE_FEED_NATS_STREAM: STREAM } });
    api = new Api(server.url);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await nats?.stop();
  });

  it('publishes it as a CloudEvent naming its size and where to read it whole, and publishes what follows', async () => {
    const properties = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key${i}`, 'v'.repeat(1000)]));
    expect((await api.post('/v1/namespace/large/create', { properties })).status).toBe(200);
    expect((await api.post('/v1/namespace/after/create', {})).status).toBe(200);
    const events = (await api.get('/v1/history/database?limit=10')).body.events;
    const messages = await eventually(() => jetStreamMessages(nats.url, STREAM, 'default'), (m) => m.length >= events.length);
    expect(messages.map((m) => revisionOf(m.event))).toEqual(events.map((e: { revision: number }) => e.revision));

    const [large, after] = messages;
    expect(large.event.id).toBe(large.msgId);
    expect(large.event).toMatchObject({ type: 'lance.catalog.NamespaceCreated', subject: 'large', sequence: expect.any(String) });
    expect(large.event.data).toEqual({
      operation: 'CreateNamespace',
      transaction_id: events[0].transaction_id,
      data_too_large: { bytes: expect.any(Number), limit: expect.any(Number), history: `/v1/history/transaction/${events[0].transaction_id}` },
    });
    expect((large.event.data as { data_too_large: { bytes: number } }).data_too_large.bytes).toBeGreaterThan(MAX_PAYLOAD);
    const whole = await api.get(`/v1/history/transaction/${events[0].transaction_id}`);
    expect(whole.body.events[0].data.properties).toEqual(properties);
    expect(after.event.data).toMatchObject({ operation: 'CreateNamespace', data: { namespace: ['after'] } });
    expect(server.process.exitCode).toBeNull();
  }, 60_000);
});
