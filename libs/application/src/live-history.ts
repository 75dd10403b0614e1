import { EventStore, RecordedEvent, Subscription } from '@app/event-store';
import { catalogStreamOf } from '@app/projections';
import { HistoryEntry, historyEntry } from './history-service';

const PAGE = 256;
/** How often a feed looks again for the first event of a database that has none yet. */
const EMPTY_STREAM_POLL_MS = 1000;

/** Where a follower's events go: `write` answers false once the receiver's buffer is full. */
export interface HistorySink {
  write(entry: HistoryEntry): boolean;
  /** Resolves once the receiver has room again (or is gone). */
  drained(): Promise<void>;
  /** The store could not be read: the follower stops and says why. */
  fail(error: unknown): void;
}

export interface HistoryFollower {
  close(): void;
}

/**
 * Live audit history: every event appended to a database's stream, in order, to every follower,
 * from any revision on. One catch-up subscription to the store per database with followers (none
 * without), started after the stream's newest event; a follower that falls behind it (it joined
 * at an older revision, its receiver is slow, or events came while it read) reads what it missed
 * from the stream itself, so nothing is lost, repeated or reordered, and nothing but the
 * receiver's own buffer is held for a slow one.
 */
export class LiveHistory {
  private readonly feeds = new Map<string, DatabaseFeed>();

  constructor(private readonly store: EventStore) {}

  /** Follows `database` from the event after revision `after` (-1: from the first event). */
  follow(database: string, after: number, sink: HistorySink): HistoryFollower {
    let feed = this.feeds.get(database);
    if (!feed) {
      feed = new DatabaseFeed(this.store, catalogStreamOf(database), () => this.feeds.delete(database));
      this.feeds.set(database, feed);
    }
    return feed.add(after + 1, sink);
  }

  /** Ends every follower and subscription (shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.feeds.values()].map((f) => f.close()));
  }
}

class DatabaseFeed {
  private readonly followers = new Set<Follower>();
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly store: EventStore,
    private readonly stream: string,
    private readonly onEmpty: () => void,
  ) {
    void this.start();
  }

  add(next: number, sink: HistorySink): HistoryFollower {
    const follower = new Follower(this.store, this.stream, next, sink, () => this.remove(follower));
    this.followers.add(follower);
    follower.pump();
    return follower;
  }

  async close(): Promise<void> {
    for (const f of [...this.followers]) f.close();
    await this.stop();
  }

  private remove(follower: Follower): void {
    this.followers.delete(follower);
    if (this.followers.size === 0) void this.stop();
  }

  private async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.onEmpty();
    clearTimeout(this.timer);
    await this.subscription?.close();
  }

  /** Subscribes after the stream's newest event; a stream with none yet is looked at again until it has one. */
  private async start(): Promise<void> {
    let newest: RecordedEvent | undefined;
    try {
      const head = await this.store.streamRevision(this.stream);
      if (head >= 0) [newest] = await this.store.readStream(this.stream, { fromRevision: head, maxCount: 1 });
    } catch (e) {
      for (const f of [...this.followers]) f.fail(e);
      return;
    }
    if (this.stopped) return;
    if (!newest) {
      this.timer = setTimeout(() => void this.start(), EMPTY_STREAM_POLL_MS);
      return;
    }
    this.subscription = this.store.subscribeToAll({ afterPosition: newest.position }, (event) => {
      if (event.streamId !== this.stream) return;
      for (const f of this.followers) f.offer(event);
    });
    // Whatever came between a follower's own read and the subscription's start.
    for (const f of this.followers) f.pump();
  }
}

class Follower implements HistoryFollower {
  private busy = false;
  private dirty = false;
  private closed = false;

  constructor(
    private readonly store: EventStore,
    private readonly stream: string,
    /** The revision this follower is to receive next. */
    private next: number,
    private readonly sink: HistorySink,
    private readonly onClose: () => void,
  ) {}

  /** A live event: passed on at once when it is the next one and nothing is pending, else read from the stream. */
  offer(event: RecordedEvent): void {
    if (this.closed || event.revision < this.next) return;
    if (!this.busy && event.revision === this.next) {
      this.next++;
      if (!this.sink.write(historyEntry(event))) this.pump(true);
      return;
    }
    this.pump();
  }

  /** Reads the stream from `next` until it has nothing more, again as long as live events came meanwhile. */
  pump(waitForRoom = false): void {
    this.dirty = true;
    if (this.busy || this.closed) return;
    this.busy = true;
    void (async () => {
      try {
        if (waitForRoom) await this.sink.drained();
        while (this.dirty && !this.closed) {
          this.dirty = false;
          await this.readStream();
        }
      } catch (e) {
        this.fail(e);
      } finally {
        this.busy = false;
      }
    })();
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.sink.fail(error);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }

  private async readStream(): Promise<void> {
    for (let page = 0; ; page++) {
      // A replay yields between pages, so a follower far behind shares the event loop with every other request.
      if (page > 0) await new Promise((resolve) => setImmediate(resolve));
      const batch = await this.store.readStream(this.stream, { fromRevision: this.next, maxCount: PAGE });
      for (const event of batch) {
        if (this.closed) return;
        this.next = event.revision + 1;
        if (!this.sink.write(historyEntry(event))) await this.sink.drained();
      }
      if (batch.length < PAGE) return;
    }
  }
}
