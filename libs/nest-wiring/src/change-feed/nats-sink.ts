import { Msg, NatsConnection, StorageType, connect, createInbox, headers, nanos } from 'nats';
import { EventSink, PublishOutcome, structuredBody, toCloudEvent, tooLargeFor } from '@app/application';
import { RecordedEvent } from '@app/event-store';

/** How long JetStream remembers a message id: a batch republished after a restart or a lease takeover is dropped as a duplicate. */
const DUPLICATE_WINDOW_MS = 5 * 60_000;
const ACK_TIMEOUT_MS = 5000;
/** What a message's headers (its id, content type, the reply subject) may take of NATS's max_payload. */
const HEADER_ROOM = 1024;

interface Connected {
  nc: NatsConnection;
  inbox: string;
}

type Waiting = { resolve: () => void; reject: (e: Error) => void };

/**
 * NATS JetStream as a change-feed sink: each event on `lance.catalog.<database>.<EventType>` of the
 * configured stream (created if missing), its CloudEvent in structured mode, `Nats-Msg-Id` its id.
 *
 * A batch is sent at once and its acknowledgements awaited in order. They come back on one inbox
 * subscription of the connection: JetStream's publish is a request, and the client's own request
 * path (a timer, an error object and a subscription entry per message) cost more CPU than the
 * rest of publishing.
 *
 * The connection does not reconnect by itself: a client that reconnects sends what it buffered
 * meanwhile, so a message lost with the old connection could be stored after the ones behind it.
 * Here a failure ends the connection, nothing buffered is sent, and the next attempt opens a new
 * one and publishes again from the first message not acknowledged.
 */
export class NatsSink implements EventSink {
  readonly name = 'nats';
  private connection?: Promise<Connected>;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();
  private readonly waiting = new Map<string, Waiting>();
  private sent = 0;

  constructor(
    private readonly url: string,
    private readonly stream: string,
  ) {}

  private connected(): Promise<Connected> {
    this.connection ??= (async () => {
      const nc = await connect({ servers: this.url, reconnect: false, timeout: 2000, name: 'lance-catalog change feed' });
      void nc.closed().then(() => {
        this.connection = undefined;
        this.failAll(new Error('the connection to NATS closed'));
      });
      try {
        const jsm = await nc.jetstreamManager({ timeout: ACK_TIMEOUT_MS });
        await jsm.streams.info(this.stream).catch(() =>
          jsm.streams.add({ name: this.stream, subjects: ['lance.catalog.>'], storage: StorageType.File, duplicate_window: nanos(DUPLICATE_WINDOW_MS) }),
        );
        const inbox = createInbox();
        nc.subscribe(`${inbox}.*`, { callback: (_e, msg) => this.acknowledged(inbox, msg) });
        return { nc, inbox };
      } catch (e) {
        await nc.close().catch(() => undefined);
        throw e;
      }
    })();
    this.connection.catch(() => (this.connection = undefined));
    return this.connection;
  }

  /** A PubAck, or JetStream's refusal (an error document, or a status such as 503: no stream for the subject). */
  private acknowledged(inbox: string, msg: Msg): void {
    const token = msg.subject.slice(inbox.length + 1);
    const waiting = this.waiting.get(token);
    if (!waiting) return;
    this.waiting.delete(token);
    const status = msg.headers?.code ?? 0;
    if (status >= 400) return waiting.reject(new Error(`JetStream answered ${status} ${msg.headers?.description ?? ''}`.trim()));
    try {
      const ack = JSON.parse(this.decoder.decode(msg.data)) as { error?: { code?: number; description?: string } };
      if (ack.error) return waiting.reject(new Error(`JetStream refused the message: ${ack.error.code ?? ''} ${ack.error.description ?? ''}`.trim()));
    } catch {
      return waiting.reject(new Error('JetStream answered something that is not an acknowledgement'));
    }
    waiting.resolve();
  }

  private failAll(error: Error): void {
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
  }

  async publish(database: string, events: readonly RecordedEvent[]): Promise<PublishOutcome> {
    let c: Connected;
    try {
      c = await this.connected();
    } catch (error) {
      return { published: 0, error };
    }
    const tokens: string[] = [];
    // Room for the headers within the server's max_payload, which counts them.
    const room = c.nc.info!.max_payload - HEADER_ROOM;
    const acks = events.map((e) => {
      const event = toCloudEvent(database, e);
      const h = headers();
      h.set('Nats-Msg-Id', event.id);
      h.set('content-type', 'application/cloudevents+json');
      const token = String(++this.sent);
      tokens.push(token);
      const ack = new Promise<void>((resolve, reject) => this.waiting.set(token, { resolve, reject }));
      // Settled by whoever awaits it, or by none when an earlier one failed: never unhandled.
      ack.catch(() => undefined);
      try {
        let body = this.encoder.encode(structuredBody(event));
        if (body.length > room) body = this.encoder.encode(structuredBody(tooLargeFor(event, body.length, room)));
        c.nc.publish(`lance.catalog.${database}.${e.type}`, body, { reply: `${c.inbox}.${token}`, headers: h });
      } catch (error) {
        this.waiting.get(token)?.reject(error as Error);
        this.waiting.delete(token);
      }
      return ack;
    });
    const timer = setTimeout(() => {
      for (const t of tokens) {
        this.waiting.get(t)?.reject(new Error(`no acknowledgement from JetStream within ${ACK_TIMEOUT_MS} ms`));
        this.waiting.delete(t);
      }
    }, ACK_TIMEOUT_MS);
    try {
      for (let i = 0; i < acks.length; i++) {
        try {
          await acks[i];
        } catch (error) {
          for (const t of tokens) this.waiting.delete(t);
          this.connection = undefined;
          await c.nc.close().catch(() => undefined);
          return { published: i, error };
        }
      }
      return { published: events.length };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const c = await this.connection?.catch(() => undefined);
    this.connection = undefined;
    await c?.nc.drain().catch(() => undefined);
  }
}
