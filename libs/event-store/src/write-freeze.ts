import { EventStore } from './event-store.port';

/**
 * The operator's stream: how `lance-catalog migrate` tells every server sharing an event store to
 * stop appending, without any other channel (Redis is optional; replicas may not be reachable one
 * by one). It is not a database's stream, so neither replay, nor copies, nor exports include it.
 */
export const OPERATOR_STREAM = 'lance-catalog-operator';

/**
 * Where `lance-catalog import`, `recover` and `migrate` (its target) say that they began filling
 * an empty store and that they finished: a stream of its own, so that no later word of the
 * operator's stream (a freeze, a move) can take the place of an unfinished load's.
 */
export const LOAD_STREAM = 'lance-catalog-load';

/** The streams that are the operator's, not a database's: copies, exports and the feed leave them out. */
export function isOperatorStream(streamId: string): boolean {
  return streamId === OPERATOR_STREAM || streamId === LOAD_STREAM;
}

/**
 * - `WritesFrozen`: appends are refused until `untilMillis` (a lease the command renews while it
 *   runs, so a command that dies leaves the catalog writable again within a lease);
 * - `WritesResumed`: the freeze is over;
 * - `EventStoreMoved`: the log was copied to another store (`to`, its password removed); appends
 *   stay refused until the servers are started again on the new store.
 */
export type OperatorEvent =
  | { type: 'WritesFrozen'; data: { reason: string; untilMillis: number } }
  | { type: 'WritesResumed'; data: { reason: string } }
  | { type: 'EventStoreMoved'; data: { to: string } };

/**
 * On LOAD_STREAM: `StoreLoading`, `lance-catalog import`, `recover` or `migrate` (`verb`) began
 * filling this empty store; `StoreLoaded`, it finished. A store whose last load word is
 * `StoreLoading` holds part of a catalog (the command died or failed): no server starts on it, it
 * takes no append, and it is neither exported nor migrated.
 */
export type LoadEvent = { type: 'StoreLoading'; data: UnfinishedLoad } | { type: 'StoreLoaded'; data: { verb: string } };

/** A load of the store that began and did not finish: which command, and when it began. */
export interface UnfinishedLoad {
  verb: string;
  startedAt: string;
}

/** How often servers read the operator's stream: whoever freezes writes waits a few of these before relying on it. */
export const WRITE_FREEZE_POLL_MS = 250;

export interface WriteFreeze {
  reason: string;
  /** Absent: until the servers run on another store (or, for a load, until it is done). */
  untilMillis?: number;
  movedTo?: string;
  /** The store holds part of a catalog that a command was loading into it. */
  loading?: UnfinishedLoad;
}

/** The operator's last word on `store`, as a freeze in force at `nowMillis`, or undefined. */
export async function currentWriteFreeze(store: EventStore, nowMillis = Date.now()): Promise<WriteFreeze | undefined> {
  const word = await lastOperatorWord(store);
  return word && freezeOf(word.event, nowMillis);
}

/** A stream's last event and its revision. */
export interface LastWord<E> {
  revision: number;
  event: E;
}

export type OperatorWord = LastWord<OperatorEvent>;
export type LoadWord = LastWord<LoadEvent>;

/** A stream's last event; `known` is returned as it is when the stream has not grown since (one read, not two). */
async function lastWord<E>(store: EventStore, stream: string, known?: LastWord<E>): Promise<LastWord<E> | undefined> {
  const head = await store.streamRevision(stream);
  if (head < 0) return undefined;
  if (known?.revision === head) return known;
  const [last] = await store.readStream(stream, { fromRevision: head, maxCount: 1 });
  return last ? { revision: head, event: last as unknown as E } : undefined;
}

/** The operator's last event (see `lastWord`). */
export function lastOperatorWord(store: EventStore, known?: OperatorWord): Promise<OperatorWord | undefined> {
  return lastWord(store, OPERATOR_STREAM, known);
}

/** The last word on the store's loads (see `lastWord`). */
export function lastLoadWord(store: EventStore, known?: LoadWord): Promise<LoadWord | undefined> {
  return lastWord(store, LOAD_STREAM, known);
}

/** The load a last load word leaves unfinished, if it does. */
export function loadLeftUnfinished(word: LoadWord | undefined): UnfinishedLoad | undefined {
  return word?.event.type === 'StoreLoading' ? word.event.data : undefined;
}

export function freezeOf(event: OperatorEvent, nowMillis: number): WriteFreeze | undefined {
  switch (event.type) {
    case 'WritesFrozen':
      return event.data.untilMillis > nowMillis ? { reason: event.data.reason, untilMillis: event.data.untilMillis } : undefined;
    case 'EventStoreMoved':
      return { reason: 'the event store was moved', movedTo: event.data.to };
    default:
      return undefined;
  }
}

export async function recordOperatorEvent(store: EventStore, event: OperatorEvent): Promise<void> {
  await store.append(OPERATOR_STREAM, [{ type: event.type, data: event.data, metadata: { occurredAt: new Date().toISOString() } }], 'any');
}

/** The load of `store` that began and never finished, if its last load word says so. */
export async function unfinishedLoad(store: EventStore): Promise<UnfinishedLoad | undefined> {
  return loadLeftUnfinished(await lastLoadWord(store));
}

export async function recordLoadEvent(store: EventStore, event: LoadEvent): Promise<void> {
  await store.append(LOAD_STREAM, [{ type: event.type, data: event.data, metadata: { occurredAt: new Date().toISOString() } }], 'any');
}

/** What an unfinished load means for whoever meets it, and what to do. */
export function unfinishedLoadProblem(load: UnfinishedLoad): string {
  return (
    `this event store holds part of a catalog: 'lance-catalog ${load.verb}', begun ${load.startedAt}, did not finish loading it. ` +
    `Empty the store (the embedded store's file, or the database) and run 'lance-catalog ${load.verb}' again` +
    (load.verb === 'migrate' ? ' (from the source, which it may have left refusing writes as moved: the new migrate lifts that)' : '')
  );
}
