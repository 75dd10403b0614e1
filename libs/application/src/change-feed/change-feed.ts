import { CatalogView, WebhookSubscriptionState } from '@app/catalog';
import { EventStore, RecordedEvent, Subscription } from '@app/event-store';
import { ProjectionRegistry, catalogStreamOf, databaseOfStream } from '@app/projections';
import { EventSink, FeedLedger } from './feed-ports';
import { SinkRunner, SinkTarget } from './sink-runner';
import { WEBHOOK_SINK_PREFIX, WebhookTarget, WebhookTargetDatabase, WebhookTargetSettings, webhookSinkName } from './webhook-target';

/** How long to wait before asking the ledger again after it failed (Redis away). */
const LEDGER_RETRY_MS = 1000;
/** How often the position up to which databases were found is written back, at most. */
const DISCOVER_EVERY_MS = 1000;

export type FeedLog = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface ChangeFeedOptions {
  /** This process, as lease holder. */
  owner: string;
  leaseMs: number;
  nats?: EventSink;
  webhooks?: WebhookTargetSettings;
  log: FeedLog;
}

/** What /metrics and the console show of one sink of one database. */
export interface SinkLag {
  database: string;
  sink: string;
  /** Events of the log not yet published. */
  events: number;
  /** How long the oldest of them has waited. */
  seconds: number;
  published: number;
  failing: boolean;
}

/**
 * The change feed: every event of every database's log, in order, to each sink (NATS JetStream, each
 * webhook subscription), at least once, resuming from each sink's durable checkpoint. Every replica
 * runs it; per database, the one holding the database's lease publishes (docs/architecture.md,
 * "The change feed"). It follows the log with one subscription of the store, which hands the
 * events over as they are appended; a sink that falls behind reads the stream itself.
 */
export class ChangeFeed {
  private readonly feeds = new Map<string, DatabaseFeed>();
  private subscription?: Subscription;
  private closed = false;
  private seenPosition = 0n;
  private writtenPosition = 0n;
  private discoverTimer?: NodeJS.Timeout;
  private startTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: EventStore,
    private readonly projections: ProjectionRegistry,
    private readonly ledger: FeedLedger,
    private readonly options: ChangeFeedOptions,
  ) {}

  /** Starts once the ledger answers (retrying while it does not); never rejects. */
  start(): void {
    void this.begin();
  }

  private async begin(): Promise<void> {
    let known: string[];
    let after: bigint;
    let head: bigint;
    try {
      [known, after] = await Promise.all([this.ledger.databases(), this.ledger.discovered()]);
      head = await this.store.headPosition();
    } catch (e) {
      this.options.log('warn', `change feed waits for Redis and the event store: ${String(e)}`);
      if (!this.closed) this.startTimer = setTimeout(() => void this.begin(), LEDGER_RETRY_MS);
      return;
    }
    if (this.closed) return;
    // A position past the log's head was found in another log (the store migrated or recovered):
    // this one's positions differ, and events appended from here would be passed over until they
    // reached it. Each sink reads its stream by revision from its own checkpoint; new events are
    // followed from this log's head.
    if (after > head) {
      this.options.log('warn', `change feed: the position found so far (${after}) is past this event store's head (${head}): following from the head`);
      after = head;
    }
    for (const database of known) this.feedOf(database);
    this.seenPosition = this.writtenPosition = after;
    this.subscription = this.store.subscribeToAll({ afterPosition: after }, (e) => this.onEvent(e));
  }

  private async onEvent(e: RecordedEvent): Promise<void> {
    const database = databaseOfStream(e.streamId);
    if (database !== undefined) {
      let feed = this.feeds.get(database);
      if (!feed) {
        // Known durably before the position moves past its first event: a restart finds it.
        while (!this.closed) {
          try {
            await this.ledger.addDatabase(database);
            break;
          } catch {
            await new Promise((r) => setTimeout(r, LEDGER_RETRY_MS));
          }
        }
        feed = this.feedOf(database);
      }
      feed.offer(e);
    }
    this.seenPosition = e.position;
    this.discoverTimer ??= setTimeout(() => void this.writeDiscovered(), DISCOVER_EVERY_MS);
  }

  private async writeDiscovered(): Promise<void> {
    const position = this.seenPosition;
    try {
      if (position > this.writtenPosition) await this.ledger.discover(position);
      this.writtenPosition = position;
    } catch {
      // Written with the next event, or never: a restart then looks from an older position, which only repeats work.
    }
    this.discoverTimer = undefined;
    if (this.seenPosition > this.writtenPosition && !this.closed) this.discoverTimer = setTimeout(() => void this.writeDiscovered(), DISCOVER_EVERY_MS);
  }

  private feedOf(database: string): DatabaseFeed {
    let feed = this.feeds.get(database);
    if (!feed) {
      feed = new DatabaseFeed(database, this.store, this.projections, this.ledger, this.options);
      this.feeds.set(database, feed);
    }
    return feed;
  }

  /** Each sink this process publishes, with its lag. */
  lags(): SinkLag[] {
    return [...this.feeds.values()].flatMap((f) => f.lags());
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.startTimer);
    clearTimeout(this.discoverTimer);
    await this.subscription?.close();
    await Promise.all([...this.feeds.values()].map((f) => f.close()));
    if (this.seenPosition > this.writtenPosition) await this.ledger.discover(this.seenPosition).catch(() => undefined);
  }
}

/**
 * One database's publishing: its lease, taken and renewed on a timer, and while held one runner per
 * sink. Losing the lease (not renewed in time, or a fenced write refused) stops every runner before
 * another replica can take it over: the lease's time runs out only after the last renewal here.
 */
class DatabaseFeed {
  held = false;
  /**
   * When the lease ends by this process's clock if it is not renewed: counted from before the
   * renewal was asked, so never later than Redis's own expiry. A process that was stopped (SIGSTOP,
   * a long pause) finds it passed and publishes nothing more until it holds the lease again.
   */
  private heldUntil = 0;
  private readonly runners = new Map<string, SinkRunner>();
  private timer?: NodeJS.Timeout;
  private closed = false;
  private refreshing?: Promise<void>;
  private refreshAgain = false;

  constructor(
    private readonly database: string,
    private readonly store: EventStore,
    private readonly projections: ProjectionRegistry,
    private readonly ledger: FeedLedger,
    private readonly options: ChangeFeedOptions,
  ) {
    void this.tick();
  }

  offer(e: RecordedEvent): void {
    if (!this.held) return;
    for (const r of this.runners.values()) r.offer(e);
    if (this.options.webhooks && e.type.startsWith('WebhookSubscription')) this.refresh();
  }

  lags(): SinkLag[] {
    return this.held ? [...this.runners.values()].map((r) => ({ database: this.database, ...r.lag() })) : [];
  }

  private async tick(): Promise<void> {
    if (this.closed) return;
    const renewedAt = Date.now();
    let ok = false;
    try {
      ok = await this.ledger.hold(this.database, this.options.owner, this.options.leaseMs);
    } catch (e) {
      if (this.held) this.options.log('warn', `change feed of '${this.database}': the lease could not be renewed (${String(e)}); publishing stops`);
    }
    if (this.closed) return;
    // A renewal that took longer than the lease is worth nothing: another replica may hold it now.
    if (ok && Date.now() - renewedAt >= this.options.leaseMs) ok = false;
    if (ok) this.heldUntil = renewedAt + this.options.leaseMs;
    if (ok && !this.held) {
      this.held = true;
      this.options.log('info', `change feed of '${this.database}': publishing from this replica`);
      this.refresh();
    } else if (!ok && this.held) {
      this.lose();
    }
    this.timer = setTimeout(() => void this.tick(), this.held ? this.options.leaseMs / 3 : this.options.leaseMs / 2);
  }

  /** A runner's fenced write was refused: another replica holds the lease now. */
  lose(): void {
    if (!this.held) return;
    this.held = false;
    this.heldUntil = 0;
    for (const r of this.runners.values()) void r.stop();
    this.runners.clear();
  }

  /** Starts the sinks the database has now: NATS, and each active webhook subscription. */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        try {
          await this.startRunners();
        } catch (e) {
          this.options.log('warn', `change feed of '${this.database}': its subscriptions could not be read (${String(e)}); trying again`);
          await new Promise((r) => setTimeout(r, LEDGER_RETRY_MS));
          this.refreshAgain = !this.closed;
        }
      } while (this.refreshAgain && this.held);
      this.refreshing = undefined;
    })();
  }

  private async startRunners(): Promise<void> {
    const wanted = new Map<string, () => SinkTarget>();
    if (this.options.nats) {
      const nats = this.options.nats;
      wanted.set(nats.name, () => ({ name: nats.name, deliver: (events) => nats.publish(this.database, events), start: async () => -1 }));
    }
    const webhooks = this.options.webhooks;
    let gone: string[] = [];
    if (webhooks) {
      const state = (await this.projections.current(this.database)).state;
      const subscriptions: WebhookSubscriptionState[] = state.webhooks.all();
      for (const s of subscriptions) {
        if (s.status === 'active') wanted.set(webhookSinkName(s.subscriptionId), () => new WebhookTarget(this.database, s, webhooks, this.targetDatabase));
      }
      gone = [...this.runners.keys()].filter((k) => k.startsWith(WEBHOOK_SINK_PREFIX) && !state.webhooks.get(k.slice(WEBHOOK_SINK_PREFIX.length)));
    }
    if (!this.held) return;
    for (const [name, runner] of this.runners) {
      if (!wanted.has(name)) {
        runner.stop();
        this.runners.delete(name);
      }
    }
    for (const name of gone) await this.ledger.forget(this.database, name).catch(() => undefined);
    for (const [name, target] of wanted) {
      if (this.runners.has(name)) continue;
      const runner = new SinkRunner(this.database, catalogStreamOf(this.database), target(), this.store, this.ledger, this.options, {
        valid: () => this.held && Date.now() < this.heldUntil,
        lost: () => this.lose(),
      });
      this.runners.set(name, runner);
      runner.start();
    }
  }

  private readonly targetDatabase: WebhookTargetDatabase = {
    stateThrough: (revision) => this.stateThrough(revision),
    log: (level, message) => this.options.log(level, message),
  };

  /** The state in memory when it is folded through `revision` (this replica's own writes are); else caught up to the log's head. */
  private async stateThrough(revision: number): Promise<CatalogView> {
    const projection = this.projections.get(this.database);
    if (projection.state.revision >= revision) return projection.state;
    return (await this.projections.current(this.database)).state;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const runners = [...this.runners.values()];
    this.runners.clear();
    await Promise.all(runners.map((r) => r.stop()));
    if (this.held) await this.ledger.release(this.database, this.options.owner).catch(() => undefined);
    this.held = false;
  }
}
