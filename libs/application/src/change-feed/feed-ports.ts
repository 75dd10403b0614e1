import { RecordedEvent } from '@app/event-store';

/** A sink's durable place in a database's log, and how its last attempt went. */
export interface SinkCheckpoint {
  /** The last revision it published; -1: none yet (absent: never started). */
  revision?: number;
  lastError?: string;
  /** When it began failing (epoch ms); absent while it delivers. */
  failingSince?: number;
}

/**
 * Where the change feed keeps what must survive a process: which databases it knows of, how far
 * it has looked for new ones, each database's lease (one publisher at a time across replicas) and
 * each sink's checkpoint. Out of the catalog's log, so publishing never appends what it publishes.
 */
export interface FeedLedger {
  /** Takes the database's lease for `owner`, or renews it; true while `owner` holds it. */
  hold(database: string, owner: string, ttlMs: number): Promise<boolean>;
  release(database: string, owner: string): Promise<void>;
  checkpoint(database: string, sink: string): Promise<SinkCheckpoint>;
  /**
   * Records the sink's progress, only while `owner` holds the database's lease (a fenced write,
   * in one step with the lease check): false when it does not, and nothing is written. The
   * revision never moves back.
   */
  advance(database: string, sink: string, owner: string, progress: SinkCheckpoint): Promise<boolean>;
  /**
   * Moves the sink's checkpoint to `revision`, back too, only while `owner` holds the lease: for a
   * checkpoint written for another log, past this one's head (a restore, a recover).
   */
  reset(database: string, sink: string, owner: string, revision: number): Promise<boolean>;
  /** Drops a sink's checkpoint (a deleted subscription). */
  forget(database: string, sink: string): Promise<void>;
  /** Every database the feed has seen events of. */
  databases(): Promise<string[]>;
  addDatabase(database: string): Promise<void>;
  /** The global position up to which every database with events is in `databases()`. */
  discovered(): Promise<bigint>;
  /** Moves `discovered` forward (never back). */
  discover(position: bigint): Promise<void>;
  close(): Promise<void>;
}

/** What a sink answers for a batch: how many leading events it stored, and why it stopped short. */
export interface PublishOutcome {
  published: number;
  error?: unknown;
}

/** A destination every event of every database goes to (NATS JetStream). */
export interface EventSink {
  readonly name: string;
  publish(database: string, events: readonly RecordedEvent[]): Promise<PublishOutcome>;
  close(): Promise<void>;
}

/** A refusal to deliver to where a URL resolves (SSRF): retried like any failure, since DNS may change. */
export class WebhookRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookRefusedError';
  }
}

/** POSTs one request to a subscriber's URL; resolves on a 2xx, throws otherwise (with a short reason). */
export interface WebhookDelivery {
  post(url: string, body: string, headers: Record<string, string>): Promise<void>;
  /** Where the URL resolves now is a place deliveries may go; throws WebhookRefusedError otherwise. */
  check(url: string): Promise<void>;
}
