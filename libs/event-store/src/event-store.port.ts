/**
 * The event store port: one ordered log of streams. Every adapter (embedded SQLite, EventStoreDB)
 * implements exactly this and passes the shared conformance suite.
 */

/** Revision of the last event the writer saw in the stream (0-based), or a stream-level guard. */
export type ExpectedRevision = number | 'no_stream' | 'any';

export interface NewEvent {
  type: string;
  data: unknown;
  metadata?: unknown;
  /** Unique id; generated when absent. */
  id?: string;
}

export interface RecordedEvent<D = unknown, M = unknown> {
  id: string;
  streamId: string;
  /** 0-based position of the event inside its stream. */
  revision: number;
  /** Position in the global order of all events of the store; strictly increasing. */
  position: bigint;
  type: string;
  data: D;
  metadata: M;
  created: Date;
}

export interface AppendResult {
  /** Revision of the last event appended: pass it as the next expected revision. */
  nextExpectedRevision: number;
  /** Global position of the last event appended. */
  position: bigint;
}

export interface ReadStreamOptions {
  /** First revision to return (inclusive). Default 0. */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Return only events strictly after this global position. Default: from the start. */
  afterPosition?: bigint;
  maxCount?: number;
}

export interface Subscription {
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position; from the start when absent. */
  afterPosition?: bigint;
}

/** A file whose content must be exactly as durable as the events appended with it. */
export interface JournaledFile {
  path: string;
  bytes: Uint8Array;
}

export interface AppendOptions {
  /** Recorded in the same durable write as the events; only for stores that have a `journal`. */
  files?: readonly JournaledFile[];
}

/**
 * Files recorded with appends, kept until whoever wrote them to disk has made them durable there
 * and releases them. After a crash the pending ones are what must be put back on disk.
 */
export interface FileJournal {
  /** Pending files, oldest first. */
  pending(limit: number): Promise<Array<JournaledFile & { id: number }>>;
  /**
   * The same files without their bytes (`size` is how many they are): what syncing files already
   * on disk needs. With `afterId`, only those recorded after it: what counting new ones needs.
   */
  pendingPaths(limit: number, afterId?: number): Promise<Array<{ id: number; path: string; size: number }>>;
  /** The highest id recorded so far (0 before any): ids only grow, so a file above it is recorded after this call. */
  newestId(): Promise<number>;
  release(ids: readonly number[]): Promise<void>;
  /**
   * Releases the pending files at these paths, whatever their ids: files about to be removed on
   * purpose (the manifests of versions recorded deleted), which a recovery must not put back.
   */
  releasePaths(paths: readonly string[]): Promise<void>;
}

export interface EventStore {
  /** Name of the adapter, for logs and readiness reports. */
  readonly kind: string;
  /** Present when the store can record files in the same durable write as events. */
  readonly journal?: FileJournal;
  /**
   * Appends all events atomically, or none: fails with WrongExpectedRevisionError when the
   * stream's last revision differs from `expected`.
   */
  append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options?: AppendOptions): Promise<AppendResult>;
  /** Events of one stream in revision order. A missing stream reads as empty. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Revision of the stream's last event, or -1 when the stream does not exist. Cheap. */
  streamRevision(streamId: string): Promise<number>;
  /** Events of every stream in global order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Global position of the newest event, 0 for an empty store: where a copy "up to now" stops. */
  headPosition(): Promise<bigint>;
  /**
   * Catch-up subscription: delivers every event after the given position in global order, then
   * every new one as it is appended, one at a time (the next waits for the handler's promise).
   */
  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => void | Promise<void>): Subscription;
  /** Answers when the store can be reached; throws EventStoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Whether a stream whose last revision is `current` (-1: no stream) is where `expected` says. */
export function revisionMatches(expected: ExpectedRevision, current: number): boolean {
  return expected === 'any' || (expected === 'no_stream' ? current === -1 : current === expected);
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number,
  ) {
    super(`stream '${streamId}' is at revision ${actual}, expected ${String(expected)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

export class EventStoreUnavailableError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'EventStoreUnavailableError';
  }
}
