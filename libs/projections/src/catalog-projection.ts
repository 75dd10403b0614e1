import { CatalogEnvelope, CatalogEvent, CatalogState, EventMetadata, foldRecorded } from '@app/catalog';
import { EventStore, RecordedEvent } from '@app/event-store';
import { digestSteps } from './canonical-dump';
import { Snapshots } from './snapshots';

const CATALOG_STREAM_PREFIX = 'catalog-';

/** One stream per database holds its whole catalog, so a multi-table commit is one atomic append. */
export function catalogStreamOf(database: string): string {
  return `${CATALOG_STREAM_PREFIX}${database}`;
}

/** The database a stream holds the log of; undefined for any other stream (the operator's write freeze). */
export function databaseOfStream(streamId: string): string | undefined {
  return streamId.startsWith(CATALOG_STREAM_PREFIX) ? streamId.slice(CATALOG_STREAM_PREFIX.length) : undefined;
}

export function envelopeOf(recorded: RecordedEvent): CatalogEnvelope {
  return {
    event: { type: recorded.type, data: recorded.data } as CatalogEvent,
    metadata: recorded.metadata as EventMetadata,
    revision: recorded.revision,
  };
}

/**
 * Small pages: a page of parsed events that outlives two scavenges is promoted, and garbage in the
 * old space is what grows the heap of a process folding a long log.
 */
const PAGE = 256;
const CAUGHT_UP = Promise.resolve();

/** A stream head, and when the read that found it began. */
interface HeadRead {
  revision: number;
  startedAt: number;
}
/** Tables copied per turn of the event loop when a snapshot is taken. */
const TABLES_PER_STEP = 5000;

/**
 * The read model of one database, folded from its stream (after the snapshot, if a usable one
 * exists). Every change to the state goes through one queue, so a reader's catch-up and a
 * writer's own events never apply twice, and a snapshot never sees half of a change.
 */
export class CatalogProjection {
  private current = new CatalogState();
  readonly streamId: string;
  private queue: Promise<unknown> = Promise.resolve();
  private restored = false;
  private restoreUnderWay = false;
  /** The revision the newest snapshot (written or read) covers. */
  private snapshotRevision = -1;
  private snapshotting?: Promise<void>;
  private nextHead?: Promise<HeadRead>;
  /** When the newest head read the state is folded up to began (performance.now()); see catchUp. */
  private foldedAsOf = -Infinity;
  /** Whether a caller has read the head in this turn of the event loop already (see headAfterCallers). */
  private headReadThisTurn = false;

  constructor(
    private readonly store: EventStore,
    readonly database: string,
    private readonly snapshots?: Snapshots,
    /** How long a finished transaction stays in memory (see foldRecorded); 0: for good. */
    private readonly transactionMemoryMs = 0,
  ) {
    this.streamId = catalogStreamOf(database);
  }

  get state(): CatalogState {
    return this.current;
  }

  /** Whether a first call is restoring its snapshot: it holds no event yet, and will. */
  get restoring(): boolean {
    return this.restoreUnderWay;
  }

  /**
   * Brings the state up to the stream's head as of now: a read after this sees every acknowledged
   * write. `since` (performance.now() when the request arrived): a head read begun after it, and
   * folded, serves it too, so a request whose state was caught up once (by the edge, to judge its
   * grants) does not read the head again, nor do requests that a shared read already covers.
   */
  catchUp(since?: number): Promise<void> {
    if (since !== undefined && this.foldedAsOf >= since) return CAUGHT_UP;
    return this.catchUpTo(this.headAfterCallers());
  }

  /** The same with a read of the head of its own, now: for a caller that already waited for others. */
  catchUpNow(): Promise<void> {
    return this.catchUpTo(this.headNow());
  }

  /** Not an async function: every read passes here, and once restored it is one promise step. */
  private catchUpTo(headRead: Promise<HeadRead>): Promise<void> {
    if (!this.restored) return this.restoreThenCatchUp(headRead);
    return headRead.then((read) => (this.current.revision >= read.revision ? this.folded(read) : this.serialised(() => this.readUpTo(read.revision)).then(() => this.folded(read))));
  }

  private async restoreThenCatchUp(headRead: Promise<HeadRead>): Promise<void> {
    // The head read runs while a first call restores the snapshot: if the store refuses it then, the
    // rejection must already have a handler (it is awaited below), or it ends the process.
    headRead.catch(() => undefined);
    this.restoreUnderWay = true;
    try {
      await this.serialised(() => this.restore());
    } finally {
      this.restoreUnderWay = false;
    }
    const read = await headRead;
    if (this.current.revision < read.revision) await this.serialised(() => this.readUpTo(read.revision));
    this.folded(read);
  }

  /** The state holds everything up to a head read begun at `read.startedAt`, if it reached that head. */
  private folded(read: HeadRead): void {
    if (this.current.revision >= read.revision && read.startedAt > this.foldedAsOf) this.foldedAsOf = read.startedAt;
  }

  private headNow(): Promise<HeadRead> {
    const startedAt = performance.now();
    return this.store.streamRevision(this.streamId).then((revision) => ({ revision, startedAt }));
  }

  /**
   * The stream's head, read after the caller asked, so that it sees every write acknowledged before
   * then. The first caller of a turn of the event loop reads it at once: a lone request (a client
   * waiting on each answer) does not wait for the turn to end, which cost it 50 to 130 µs. Callers
   * after it in the same turn share one read taken after all of them arrived: under load dozens of
   * requests share it, and on the embedded store each read takes a shared lock on SQLite's WAL index.
   */
  private headAfterCallers(): Promise<HeadRead> {
    if (!this.headReadThisTurn) {
      this.headReadThisTurn = true;
      setImmediate(() => (this.headReadThisTurn = false));
      return this.headNow();
    }
    this.nextHead ??= new Promise<HeadRead>((resolve, reject) =>
      setImmediate(() => {
        // Whoever asks from now on may have arrived after this read began: theirs is the next one.
        this.nextHead = undefined;
        this.headNow().then(resolve, reject);
      }),
    );
    return this.nextHead;
  }

  /** Applies events this process has just appended, or catches up if others wrote in between. */
  async applyAppended(envelopes: CatalogEnvelope[]): Promise<void> {
    await this.serialised(async () => {
      await this.restore();
      const first = envelopes[0]?.revision;
      if (first === undefined || this.current.revision >= envelopes[envelopes.length - 1].revision) return;
      if (this.current.revision === first - 1) {
        for (const e of envelopes) this.apply(e);
      } else {
        await this.readUpTo(envelopes[envelopes.length - 1].revision);
      }
      this.snapshotWhenDue();
    });
  }

  /**
   * The digest of the state as folded now (see digestSteps). It runs inside the queue, so no event
   * is folded until it is done, and gives the event loop a turn between steps: on a million events
   * the whole digest takes seconds, which in one piece would hold every other request.
   */
  digest(): Promise<{ revision: number; digest: string }> {
    return this.serialised(async () => ({ revision: this.current.revision, digest: (await inTurns(digestSteps(this.current))).value }));
  }

  /** Waits for a snapshot being written, then writes one of what was folded since (graceful shutdown). */
  async close(): Promise<void> {
    await this.snapshotting;
    if (this.snapshots && this.current.revision > this.snapshotRevision) await this.takeSnapshot();
  }

  /** Once, before anything is folded: start from the snapshot if there is a usable one. */
  private async restore(): Promise<void> {
    if (this.restored) return;
    this.restored = true;
    if (!this.snapshots || this.current.revision >= 0) return;
    const state = await this.snapshots.load(this.database, this.store, this.streamId).catch((e: Error) => {
      this.snapshots!.log(`ignoring the snapshot of '${this.database}': ${e.message}`);
      return undefined;
    });
    if (!state) return;
    this.current = state;
    this.snapshotRevision = state.revision;
  }

  private snapshotWhenDue(): void {
    if (!this.snapshots || this.snapshotting || this.current.revision - this.snapshotRevision < this.snapshots.every) return;
    this.snapshotting = new Promise<void>((r) => setImmediate(r)).then(() => this.takeSnapshot());
  }

  private async takeSnapshot(): Promise<void> {
    const snapshots = this.snapshots!;
    try {
      // Taken inside the queue, so no event is folded while the state is copied; reads go on between steps.
      const captured = await this.serialised(() => inTurns(this.current.imageSteps(TABLES_PER_STEP)));
      const image = captured.value;
      if (image.revision < 0 || image.revision <= this.snapshotRevision) return;
      const [event] = await this.store.readStream(this.streamId, { fromRevision: image.revision, maxCount: 1 });
      if (!event || event.revision !== image.revision) return;
      const written = await snapshots.save(this.database, image, event.id);
      this.snapshotRevision = Math.max(this.snapshotRevision, image.revision);
      snapshots.log(
        `snapshot of '${this.database}' at revision ${image.revision} written: ${(written.bytes / 1048576).toFixed(1)} MiB, ` +
          `longest copying step ${captured.longestMs.toFixed(0)} ms, longest encoding step ${written.longestStepMs.toFixed(0)} ms`,
      );
    } catch (e) {
      snapshots.log(`snapshot of '${this.database}' not written: ${(e as Error).message}`);
    } finally {
      this.snapshotting = undefined;
    }
  }

  private async readUpTo(head: number): Promise<void> {
    while (this.current.revision < head) {
      const batch = await this.store.readStream(this.streamId, { fromRevision: this.current.revision + 1, maxCount: PAGE });
      if (batch.length === 0) break;
      for (const recorded of batch) this.apply(envelopeOf(recorded));
    }
    this.snapshotWhenDue();
  }

  private apply(envelope: CatalogEnvelope): void {
    if (envelope.revision !== this.current.revision + 1) return;
    foldRecorded(this.current, envelope, this.transactionMemoryMs);
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Runs `steps` to the end with a turn of the event loop between steps; reports the longest step. */
async function inTurns<T>(steps: Generator<void, T, void>): Promise<{ value: T; longestMs: number }> {
  let longestMs = 0;
  for (;;) {
    const started = performance.now();
    const step = steps.next();
    longestMs = Math.max(longestMs, performance.now() - started);
    if (step.done) return { value: step.value, longestMs };
    await new Promise((r) => setImmediate(r));
  }
}
