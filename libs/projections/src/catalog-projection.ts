import { CatalogEnvelope, CatalogEvent, CatalogState, EventMetadata, evolve } from '@app/catalog';
import { EventStore, RecordedEvent } from '@app/event-store';

/** One stream per database holds its whole catalog, so a multi-table commit is one atomic append. */
export function catalogStreamOf(database: string): string {
  return `catalog-${database}`;
}

export function envelopeOf(recorded: RecordedEvent): CatalogEnvelope {
  return {
    event: { type: recorded.type, data: recorded.data } as CatalogEvent,
    metadata: recorded.metadata as EventMetadata,
    revision: recorded.revision,
  };
}

/** Small pages: a page of parsed events that outlives two scavenges is promoted, and old-space garbage is what grows the heap. */
const PAGE = 256;

/**
 * The read model of one database, folded from its stream. Every change to the state goes through
 * one queue, so a reader's catch-up and a writer's own events never apply twice.
 */
export class CatalogProjection {
  readonly state = new CatalogState();
  readonly streamId: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    readonly database: string,
  ) {
    this.streamId = catalogStreamOf(database);
  }

  /** Brings the state up to the stream's head as of now: a read after this sees every acknowledged write. */
  async catchUp(): Promise<void> {
    const head = await this.store.streamRevision(this.streamId);
    if (this.state.revision >= head) return;
    await this.serialised(() => this.readUpTo(head));
  }

  /** Applies events this process has just appended, or catches up if others wrote in between. */
  async applyAppended(envelopes: CatalogEnvelope[]): Promise<void> {
    await this.serialised(async () => {
      const first = envelopes[0]?.revision;
      if (first === undefined || this.state.revision >= envelopes[envelopes.length - 1].revision) return;
      if (this.state.revision === first - 1) {
        for (const e of envelopes) this.apply(e);
        return;
      }
      await this.readUpTo(envelopes[envelopes.length - 1].revision);
    });
  }

  private async readUpTo(head: number): Promise<void> {
    while (this.state.revision < head) {
      const batch = await this.store.readStream(this.streamId, { fromRevision: this.state.revision + 1, maxCount: PAGE });
      if (batch.length === 0) return;
      for (const recorded of batch) this.apply(envelopeOf(recorded));
    }
  }

  private apply(envelope: CatalogEnvelope): void {
    if (envelope.revision !== this.state.revision + 1) return;
    evolve(this.state, envelope);
    this.state.revision = envelope.revision;
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
