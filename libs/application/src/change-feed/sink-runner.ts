import { EventStore, RecordedEvent } from '@app/event-store';
import { FeedLedger, PublishOutcome, SinkCheckpoint } from './feed-ports';

/** Events one delivery takes at most (read from the stream, or handed over as appended). */
const PAGE = 256;
/** Appended events held for a sink that is busy; past this it reads them from the stream instead. */
const MAX_BUFFER = 8192;
const RETRY_MS = 1000;
/**
 * How often a sink that delivers writes its checkpoint at most. A write is a Redis round trip; at a
 * thousand commits a second in small batches it cost more than the publishing. A replica taking over
 * publishes again at most this much (duplicates, which JetStream drops and `webhook-id` names).
 * A failure, a recovery, and stopping with the lease held write at once.
 */
const CHECKPOINT_EVERY_MS = 100;
/** Under a steady flow of events, the least time between two batches (see the loop). */
const LINGER_MS = 2;

/** One destination as a runner drives it. */
export interface SinkTarget {
  readonly name: string;
  /** The revision before the first one it is to get when it has no checkpoint yet (-1: the whole log). */
  start(): Promise<number>;
  /**
   * Delivers in order; says how many leading events went through, and why it stopped short. Stops
   * (without an error) once `valid` answers false: the lease may be another replica's by now.
   */
  deliver(events: readonly RecordedEvent[], valid: () => boolean): Promise<PublishOutcome>;
  /** Pauses between attempts while it fails: from `min`, doubling up to `max`. */
  readonly backoffMs?: { min: number; max: number };
  /** Asked after each failure: true when the target gives up (and has recorded so); the runner then stops. */
  giveUp?(failingSince: number, reason: string, revision: number): Promise<boolean>;
}

/**
 * Drives one sink of one database while this process holds the database's lease: from the sink's
 * checkpoint, batches of events in revision order, the checkpoint moved after each (a fenced write:
 * refused once another replica holds the lease, and this runner then stops). Events appended
 * meanwhile are handed over without a read when they follow on; anything else is read from the
 * stream. No timer while it is caught up: it waits for the next event.
 */
export class SinkRunner {
  private next = -1;
  private head = -1;
  private buffer: RecordedEvent[] = [];
  private dirty = false;
  private wake?: () => void;
  /** Ends a pause between attempts: only stopping does (new events do not shorten a backoff). */
  private interrupt?: () => void;
  private stopped = false;
  private running?: Promise<void>;
  private published = 0;
  private failingSince?: number;
  private lastError?: string;
  private pendingSince?: number;
  private deliveredAt = 0;
  /** The progress last written, when it was, and the write under way. */
  private written: { revision: number; lastError?: string; at: number } = { revision: -2, at: 0 };
  private writing: Promise<boolean | undefined> = Promise.resolve(true);
  private flushTimer?: NodeJS.Timeout;

  constructor(
    private readonly database: string,
    private readonly stream: string,
    private readonly target: SinkTarget,
    private readonly store: EventStore,
    private readonly ledger: FeedLedger,
    private readonly options: { owner: string; log: (level: 'info' | 'warn' | 'error', message: string) => void },
    private readonly lease: { valid: () => boolean; lost: () => void },
  ) {}

  start(): void {
    this.running = this.loop().catch((e) => this.options.log('error', `change feed of '${this.database}' to ${this.target.name} stopped: ${String(e)}`));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.interrupt?.();
    await this.running;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    // A replica shutting down with the lease still its own leaves its checkpoint where it got to.
    if (this.next >= 0 && this.lease.valid()) await this.write(false).catch(() => undefined);
    await this.writing;
  }

  offer(e: RecordedEvent): void {
    if (e.revision > this.head) this.head = e.revision;
    const last = this.buffer[this.buffer.length - 1];
    if (!last || last.revision + 1 === e.revision) {
      if (this.buffer.length < MAX_BUFFER) this.buffer.push(e);
    } else if (e.revision > last.revision) {
      // A gap: whatever lies between is read from the stream.
      this.buffer = [e];
    }
    this.dirty = true;
    this.wake?.();
  }

  lag(): { sink: string; events: number; seconds: number; published: number; failing: boolean } {
    const events = this.next < 0 ? 0 : Math.max(0, this.head - this.next + 1);
    const seconds = events > 0 && this.pendingSince !== undefined ? Math.max(0, (Date.now() - this.pendingSince) / 1000) : 0;
    return { sink: this.target.name, events, seconds, published: this.published, failing: this.failingSince !== undefined };
  }

  private async loop(): Promise<void> {
    const checkpoint = await this.retrying(() => this.ledger.checkpoint(this.database, this.target.name));
    if (checkpoint === undefined) return;
    let last = checkpoint.revision ?? (await this.retrying(() => this.target.start()));
    if (last === undefined) return;
    this.failingSince = checkpoint.failingSince;
    this.lastError = checkpoint.lastError;
    const head = await this.retrying(() => this.store.streamRevision(this.stream));
    if (head === undefined) return;
    // A checkpoint past the stream's head was written for another log (the store recovered from the
    // warehouse, or restored from an older backup): waiting for revisions to reach it would pass over
    // every event until then. The sink goes on from this log's head.
    if (last > head) {
      this.options.log('warn', `change feed: ${this.target.name} of ${this.database} was checkpointed at revision ${last}, past this log's head ${head}: going on from the head`);
      // Written down at once: a checkpoint only ever moves forward, so one left past this log's
      // head would take nothing this log publishes, and a restart would pass over it again.
      const held = await this.retrying(() => this.ledger.reset(this.database, this.target.name, this.options.owner, head));
      if (held === undefined) return;
      if (!held) return this.lost();
      this.written = { revision: head, at: Date.now() };
      last = head;
    }
    this.next = last + 1;
    this.head = Math.max(this.head, head);
    const backoff = this.target.backoffMs ?? { min: 100, max: 2000 };
    let pause = backoff.min;
    while (!this.stopped) {
      this.dirty = false;
      const batch = await this.nextBatch();
      if (this.stopped) return;
      if (batch === undefined) {
        await this.sleep(RETRY_MS);
        continue;
      }
      if (batch.length === 0) {
        this.pendingSince = undefined;
        if (!this.dirty) await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        // The store hands an append's events over one by one: let it hand over the rest of them
        // first, so they go out in one batch (one write to NATS, one acknowledgement read). While
        // events come faster than one batch every LINGER_MS, wait out the rest of it as well:
        // batches of several appends, at a cost of at most that much lag.
        const since = performance.now() - this.deliveredAt;
        await new Promise((resolve) => (since < LINGER_MS ? setTimeout(resolve, LINGER_MS - since) : setImmediate(resolve)));
        continue;
      }
      if (batch[batch.length - 1].revision > this.head) this.head = batch[batch.length - 1].revision;
      this.pendingSince = batch[0].created.getTime();
      if (!this.lease.valid()) {
        // Not renewed in time (this process was stopped, or Redis is slow): the renewal decides.
        await this.sleep(RETRY_MS);
        continue;
      }
      const valid = () => !this.stopped && this.lease.valid();
      const outcome = await this.target.deliver(batch, valid).catch((error: unknown) => ({ published: 0, error }));
      this.deliveredAt = performance.now();
      if (outcome.published > 0) {
        this.next = batch[outcome.published - 1].revision + 1;
        this.published += outcome.published;
        this.pendingSince = outcome.published < batch.length ? batch[outcome.published].created.getTime() : undefined;
      }
      if (outcome.error === undefined) {
        this.failingSince = undefined;
        this.lastError = undefined;
      } else {
        this.failingSince ??= Date.now();
        this.lastError = shortReason(outcome.error);
      }
      const changed = this.lastError !== this.written.lastError;
      if (changed || Date.now() - this.written.at >= CHECKPOINT_EVERY_MS) {
        const held = await this.write(true);
        if (held === undefined) return;
        if (!held) return this.lost();
      } else {
        this.flushTimer ??= setTimeout(() => {
          this.flushTimer = undefined;
          void this.write(false).then((held) => held === false && this.lost());
        }, CHECKPOINT_EVERY_MS);
      }
      if (outcome.error === undefined) {
        pause = backoff.min;
        continue;
      }
      if (this.target.giveUp && (await this.target.giveUp(this.failingSince!, this.lastError!, this.next).catch(() => false))) {
        this.stopped = true;
        return;
      }
      await this.sleep(pause);
      pause = Math.min(pause * 2, backoff.max);
    }
  }

  /** Writes the progress so far (fenced by the lease); undefined when the runner stopped before Redis answered. */
  private write(retry: boolean): Promise<boolean | undefined> {
    this.writing = this.writing.then(async () => {
      const progress: SinkCheckpoint = { revision: this.next - 1, ...(this.lastError ? { lastError: this.lastError, failingSince: this.failingSince } : {}) };
      if (progress.revision === this.written.revision && progress.lastError === this.written.lastError) return true;
      const advance = () => this.ledger.advance(this.database, this.target.name, this.options.owner, progress);
      let held: boolean | undefined;
      if (retry) held = await this.retrying(advance);
      else {
        try {
          held = await advance();
        } catch {
          // Redis did not answer: the next write carries this progress too.
          return true;
        }
      }
      if (held) this.written = { revision: progress.revision!, lastError: progress.lastError, at: Date.now() };
      return held;
    });
    return this.writing;
  }

  private lost(): void {
    if (this.stopped) return;
    this.options.log('warn', `change feed of '${this.database}': another replica holds the lease; ${this.target.name} stops here`);
    this.stopped = true;
    this.wake?.();
    this.interrupt?.();
    this.lease.lost();
  }

  /** The next events from `next` on: handed over when they follow on, else read; undefined when the store failed. */
  private async nextBatch(): Promise<RecordedEvent[] | undefined> {
    let skip = 0;
    while (skip < this.buffer.length && this.buffer[skip].revision < this.next) skip++;
    if (skip) this.buffer.splice(0, skip);
    if (this.buffer.length && this.buffer[0].revision === this.next) return this.buffer.splice(0, PAGE);
    this.buffer = [];
    try {
      return await this.store.readStream(this.stream, { fromRevision: this.next, maxCount: PAGE });
    } catch {
      return undefined;
    }
  }

  /** Runs `work` until it answers or the runner stops (undefined then). */
  private async retrying<T>(work: () => Promise<T>): Promise<T | undefined> {
    while (!this.stopped) {
      try {
        return await work();
      } catch {
        await this.sleep(RETRY_MS);
      }
    }
    return undefined;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.interrupt = () => {
        clearTimeout(timer);
        resolve();
      };
    }).then(() => {
      this.interrupt = undefined;
    });
  }
}

/** A failure as describe and /metrics tell it: one line, bounded, no stack. */
export function shortReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').slice(0, 300);
}
