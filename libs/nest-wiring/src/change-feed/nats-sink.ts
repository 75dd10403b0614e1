import { JetStreamClient, NatsConnection, StorageType, connect, headers, nanos } from 'nats';
import { EventSink, PublishOutcome, structuredBody, toCloudEvent } from '@app/application';
import { RecordedEvent } from '@app/event-store';

/** How long JetStream remembers a message id: a batch republished after a restart or a lease takeover is dropped as a duplicate. */
const DUPLICATE_WINDOW_MS = 5 * 60_000;
const ACK_TIMEOUT_MS = 5000;

/**
 * NATS JetStream as a change-feed sink: each event on `lance.catalog.<database>.<EventType>` of the
 * configured stream (created if missing), its CloudEvent in structured mode, `Nats-Msg-Id` its id.
 *
 * A batch is sent at once and its acknowledgements awaited in order. The connection does not
 * reconnect by itself: a client that reconnects sends what it buffered meanwhile, so a message lost
 * with the old connection could be stored after the ones behind it. Here a failure ends the
 * connection, nothing buffered is sent, and the next attempt opens a new one and publishes again
 * from the first message not acknowledged.
 */
export class NatsSink implements EventSink {
  readonly name = 'nats';
  private connection?: Promise<{ nc: NatsConnection; js: JetStreamClient }>;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly url: string,
    private readonly stream: string,
  ) {}

  private connected(): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    this.connection ??= (async () => {
      const nc = await connect({ servers: this.url, reconnect: false, timeout: 2000, name: 'lance-catalog change feed' });
      void nc.closed().then(() => (this.connection = undefined));
      try {
        const jsm = await nc.jetstreamManager({ timeout: ACK_TIMEOUT_MS });
        await jsm.streams.info(this.stream).catch(() =>
          jsm.streams.add({ name: this.stream, subjects: ['lance.catalog.>'], storage: StorageType.File, duplicate_window: nanos(DUPLICATE_WINDOW_MS) }),
        );
        return { nc, js: nc.jetstream({ timeout: ACK_TIMEOUT_MS }) };
      } catch (e) {
        await nc.close().catch(() => undefined);
        throw e;
      }
    })();
    this.connection.catch(() => (this.connection = undefined));
    return this.connection;
  }

  async publish(database: string, events: readonly RecordedEvent[]): Promise<PublishOutcome> {
    let c;
    try {
      c = await this.connected();
    } catch (error) {
      return { published: 0, error };
    }
    const acks = events.map((e) => {
      const event = toCloudEvent(database, e);
      const h = headers();
      h.set('content-type', 'application/cloudevents+json');
      return c.js.publish(`lance.catalog.${database}.${e.type}`, this.encoder.encode(structuredBody(event)), { msgID: event.id, headers: h, timeout: ACK_TIMEOUT_MS });
    });
    for (const ack of acks) ack.catch(() => undefined);
    for (let i = 0; i < acks.length; i++) {
      try {
        await acks[i];
      } catch (error) {
        this.connection = undefined;
        await c.nc.close().catch(() => undefined);
        return { published: i, error };
      }
    }
    return { published: events.length };
  }

  async close(): Promise<void> {
    const c = await this.connection?.catch(() => undefined);
    this.connection = undefined;
    await c?.nc.drain().catch(() => undefined);
  }
}
