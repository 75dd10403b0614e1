import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
} from '@eventstore/db-client';
import type { AllStreamResolvedEvent, JSONType, Position, ResolvedEvent } from '@eventstore/db-client';
import {
  AppendOptions,
  AppendResult,
  EventStore,
  EventStoreUnavailableError,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
} from '../event-store.port';

const SHIFT = 64n;
const MASK = (1n << SHIFT) - 1n;

/** EventStoreDB positions are (commit, prepare) pairs; the port wants one increasing number. */
export const encodePosition = (p: Position): bigint => (p.commit << SHIFT) | p.prepare;
export const decodePosition = (n: bigint): Position => ({ commit: n >> SHIFT, prepare: n & MASK });

/** The production adapter: a thin mapping of the port onto `@eventstore/db-client`. */
export class EsdbEventStore implements EventStore {
  readonly kind = 'eventstoredb';
  private readonly client: EventStoreDBClient;

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options?: AppendOptions): Promise<AppendResult> {
    // This store has no journal: callers make files durable themselves before appending.
    if (options?.files?.length) throw new Error('EventStoreDB keeps no file journal');
    const expectedRevision = expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : BigInt(expected);
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) => jsonEvent({ type: e.type, data: (e.data ?? null) as JSONType, metadata: e.metadata ?? {}, ...(e.id ? { id: e.id } : {}) })),
        { expectedRevision },
      );
      return {
        nextExpectedRevision: Number(result.nextExpectedRevision),
        position: result.position ? encodePosition(result.position) : 0n,
      };
    } catch (e) {
      if (e instanceof WrongExpectedVersionError) {
        const actual = typeof e.actualVersion === 'bigint' ? Number(e.actualVersion) : -1;
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      throw unavailable(e);
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        direction: FORWARDS,
        fromRevision: options.fromRevision ? BigInt(options.fromRevision) : START,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        const recorded = toRecorded(resolved);
        if (recorded) out.push(recorded);
      }
    } catch (e) {
      if (e instanceof StreamNotFoundError) return [];
      throw unavailable(e);
    }
    return out;
  }

  async streamRevision(streamId: string): Promise<number> {
    try {
      for await (const resolved of this.client.readStream(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
        return Number(resolved.event?.revision ?? -1);
      }
      return -1;
    } catch (e) {
      if (e instanceof StreamNotFoundError) return -1;
      throw unavailable(e);
    }
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    const after = options.afterPosition;
    try {
      const read = this.client.readAll({
        direction: FORWARDS,
        fromPosition: after ? decodePosition(after) : START,
      });
      for await (const resolved of read) {
        const recorded = toRecorded(resolved);
        if (!recorded || recorded.type.startsWith('$') || recorded.streamId.startsWith('$')) continue;
        if (after !== undefined && recorded.position <= after) continue;
        out.push(recorded);
        if (options.maxCount !== undefined && out.length >= options.maxCount) break;
      }
    } catch (e) {
      throw unavailable(e);
    }
    return out;
  }

  async headPosition(): Promise<bigint> {
    try {
      // The newest events may be the server's own ($-prefixed): those are not this log's.
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1000 })) {
        const recorded = toRecorded(resolved);
        if (recorded && !recorded.type.startsWith('$') && !recorded.streamId.startsWith('$')) return recorded.position;
      }
      return 0n;
    } catch (e) {
      throw unavailable(e);
    }
  }

  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => void | Promise<void>): Subscription {
    const after = options.afterPosition;
    const subscription = this.client.subscribeToAll({
      fromPosition: after ? decodePosition(after) : START,
      filter: excludeSystemEvents(),
    });
    const running = (async () => {
      for await (const resolved of subscription) {
        const recorded = toRecorded(resolved);
        if (!recorded || (after !== undefined && recorded.position <= after)) continue;
        await onEvent(recorded);
      }
    })().catch(() => undefined);
    return {
      close: async () => {
        await subscription.unsubscribe();
        await running;
      },
    };
  }

  async ping(): Promise<void> {
    await this.streamRevision('$ping-lance-catalog');
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
  const e = resolved.event;
  if (!e) return undefined;
  return {
    id: e.id,
    streamId: e.streamId,
    revision: Number(e.revision),
    position: e.position ? encodePosition(e.position) : 0n,
    type: e.type,
    data: e.isJson ? e.data : null,
    metadata: (e.metadata ?? {}) as unknown,
    created: e.created,
  };
}

function unavailable(e: unknown): unknown {
  if (e instanceof UnavailableError || (e instanceof Error && /unavailable|ECONNREFUSED|deadline|connect/i.test(e.message))) {
    return new EventStoreUnavailableError(`EventStoreDB: ${(e as Error).message}`, e);
  }
  return e;
}
