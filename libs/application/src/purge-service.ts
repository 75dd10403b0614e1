import { LiveLocation, PendingPurge, decideRecordTablePurged, liveTablesAtPurge } from '@app/catalog';
import { EventStore } from '@app/event-store';
import { ProjectionRegistry } from '@app/projections';
import { Warehouse } from '@app/storage';
import { CatalogWriter, unavailableAs503 } from './catalog-writer';
import { PurgeQueue } from './purge-queue.port';

const STREAM_PREFIX = 'catalog-';
const PAGE = 10_000;

export type PurgeOutcome = 'purged' | 'skipped' | 'not due' | 'nothing pending';

export interface PurgeResult {
  outcome: PurgeOutcome;
  /** When skipped: the live tables whose files lie at, inside or around the dropped table's location. */
  skipped?: LiveLocation[];
}

/**
 * The lifecycle of a dropped table's files. DropTable (and DropNamespace with Cascade) record a
 * pending purge with the drop, due `DROP_RETENTION_SECONDS` later, and queue a delayed job for it;
 * the job deletes everything under the table's location (data, manifests, indexes, HNSW graphs,
 * staging files) and records `TablePurged`. Deleting what is already gone deletes nothing, and the
 * record is made once, so a retried or repeated job is harmless. Registering the location again
 * before then cancels the purge. The catalog's state is the list of what is pending: a sweep queues
 * those whose job Redis may have lost. A purge whose location is at, inside or around a live
 * table's (only a log from before such locations were refused can hold one) deletes nothing and
 * records the tables it left alone.
 */
export class PurgeService {
  /** How far the sweep has read the log, and the databases it has seen purges scheduled in. */
  private scanned?: bigint;
  private readonly databases = new Set<string>();

  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly warehouse: Warehouse,
    private readonly store: EventStore,
    private readonly queue: PurgeQueue,
    /** How long a dropped table's files are kept, in ms (0: purged at once). */
    readonly retentionMs: number,
  ) {}

  /** When a table dropped now is to be purged. */
  schedule(now = Date.now()): { purgeAfterMillis: number } {
    return { purgeAfterMillis: now + this.retentionMs };
  }

  /** Queues the purge of each table a drop scheduled; a queue away now is made up for by the sweep. */
  async queuePurges(database: string, purges: Array<Pick<PendingPurge, 'tableUuid' | 'purgeAfterMillis'>>): Promise<void> {
    for (const p of purges) await this.queue.enqueue({ database, tableUuid: p.tableUuid }, Math.max(0, p.purgeAfterMillis - Date.now()));
  }

  async purge(database: string, tableUuid: string, now = Date.now()): Promise<PurgeResult> {
    const state = (await unavailableAs503(() => this.projections.current(database))).state;
    const pending = state.pendingPurge(tableUuid);
    if (!pending) return { outcome: 'nothing pending' };
    if (pending.purgeAfterMillis > now) {
      await this.queue.enqueue({ database, tableUuid }, pending.purgeAfterMillis - now);
      return { outcome: 'not due' };
    }
    // No new table can be declared there while the purge is pending, so what is live now stays so.
    const skipped = liveTablesAtPurge(state, pending.location);
    const files = skipped.length ? 0 : await this.warehouse.files.removeTree(pending.location);
    await this.writer.execute({ database, context: { origin: 'table-purge' }, delimiter: '$', service: true }, 'PurgeTable', (view) => ({
      events: decideRecordTablePurged(view, { tableUuid, files, skipped }),
      result: () => undefined,
    }));
    return skipped.length ? { outcome: 'skipped', skipped } : { outcome: 'purged' };
  }

  /**
   * Queues every pending purge again (a job already queued stays as it is): the purges of databases
   * whose log schedules any, found by reading the log once and then only what was appended since.
   */
  async sweep(): Promise<number> {
    for (;;) {
      const batch = await this.store.readAll({ afterPosition: this.scanned, maxCount: PAGE });
      for (const event of batch) {
        if (event.type === 'TablePurgeScheduled' && event.streamId.startsWith(STREAM_PREFIX)) this.databases.add(event.streamId.slice(STREAM_PREFIX.length));
        this.scanned = event.position;
      }
      if (batch.length < PAGE) break;
    }
    let queued = 0;
    for (const database of this.databases) {
      const state = (await this.projections.current(database)).state;
      const pending = [...state.allPendingPurges()];
      await this.queuePurges(database, pending);
      queued += pending.length;
    }
    return queued;
  }
}
