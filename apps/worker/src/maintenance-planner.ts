import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, EVENT_STORE } from '@app/nest-wiring';
import { CatalogView, ObjectId } from '@app/catalog';
import { MaintenanceService } from '@app/application';
import { EventStore, Subscription } from '@app/event-store';
import { ProjectionRegistry } from '@app/projections';
import { workerContext } from './transaction-jobs';

const STREAM_PREFIX = 'catalog-';
/** Events after which a line may need maintenance, or may have lost manifests to a client's cleanup. */
const COMMITS = new Set(['TableVersionCreated', 'TableDataChanged', 'TableRestored']);
/** Tables a sweep looks at per second, so a large catalog is swept without a burst of storage reads. */
const SWEEP_RATE = 50;

/**
 * Asks for maintenance jobs with no call from the client. It follows the event log: a table line
 * that received commits is looked at once the commits have paused for MAINTENANCE_PLAN_DELAY_MS,
 * or MAINTENANCE_PLAN_MAX_DELAY_MS after the first of them when they never pause, since a table
 * with steady writers would otherwise wait for the sweep (MaintenanceService.evaluate: versions
 * whose manifests a client removed are recorded, then the job the policy in force calls for is
 * requested). A sweep at start and every
 * MAINTENANCE_SWEEP_SECONDS looks at every managed table, so nothing depends on an event a
 * stopped worker missed. Every worker runs one; the catalog takes one job per line at a time.
 */
@Injectable()
export class MaintenancePlanner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('maintenance-planner');
  /** Lines to look at: when, and when the first commit not looked at yet came. */
  private readonly due = new Map<string, { database: string; id: ObjectId; branch?: string; at: number; since: number }>();
  private readonly databases = new Set<string>();
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private busy = false;
  private stopped = false;
  private readonly started = Date.now();

  constructor(
    private readonly maintenance: MaintenanceService,
    private readonly projections: ProjectionRegistry,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.maintenance.planner) return;
    this.subscription = this.store.subscribeToAll({}, (event) => {
      if (!event.streamId.startsWith(STREAM_PREFIX)) return;
      const database = event.streamId.slice(STREAM_PREFIX.length);
      this.databases.add(database);
      const data = event.data as { table?: ObjectId; branch?: string };
      // The log before this start is the sweep's to look at.
      if (!COMMITS.has(event.type) || !data.table || event.created.getTime() < this.started) return;
      this.markCommitted(database, data.table, data.branch);
    });
    this.timer = setInterval(() => void this.tick(), Math.max(200, Math.min(1000, this.config.maintenance.planDelayMs)));
    this.sweepTimer = setInterval(() => void this.sweep(), this.config.maintenance.sweepSeconds * 1000);
    // The first sweep once the log has been read up to now.
    setTimeout(() => void this.sweep(), this.config.maintenance.planDelayMs).unref();
  }

  /** Another commit on a line: looked at once commits pause, but no later than the longest delay after the first. */
  private markCommitted(database: string, id: ObjectId, branch: string | undefined): void {
    const now = Date.now();
    const { planDelayMs, planMaxDelayMs } = this.config.maintenance;
    const key = lineKey(database, id, branch);
    const since = this.due.get(key)?.since ?? now;
    this.due.set(key, { database, id, branch, since, at: Math.min(now + planDelayMs, since + planMaxDelayMs) });
  }

  /** A line the sweep looks at, unless a commit already has it looked at sooner. */
  private markSwept(database: string, id: ObjectId, branch: string | undefined, at: number): void {
    const key = lineKey(database, id, branch);
    const due = this.due.get(key);
    if (!due || due.at > at) this.due.set(key, { database, id, branch, since: due?.since ?? at, at });
  }

  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const now = Date.now();
      for (const [key, line] of this.due) {
        if (line.at > now) continue;
        this.due.delete(key);
        await this.maintenance.evaluate(workerContext(line.database), line.id, line.branch).then(
          (kind) => kind && this.logger.log(`asked for ${kind} on ${line.id.join('/')}${line.branch ? ` (branch ${line.branch})` : ''} in '${line.database}'`),
          (e) => this.logger.warn(`looking at ${line.id.join('/')} in '${line.database}' failed (looked at again by the next sweep): ${(e as Error).message}`),
        );
        if (this.stopped) return;
      }
    } finally {
      this.busy = false;
    }
  }

  /** Marks every managed table line of every database seen in the log, spread over time. */
  private async sweep(): Promise<void> {
    if (this.stopped) return;
    let at = Date.now();
    for (const database of this.databases) {
      const view = await this.projections.current(database).then((p) => p.state, () => undefined);
      if (!view) continue;
      for (const [id, branches] of linesOf(view)) {
        for (const branch of branches) this.markSwept(database, id, branch, (at += 1000 / SWEEP_RATE));
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.sweepTimer);
    await this.subscription?.close();
  }
}

const lineKey = (database: string, id: ObjectId, branch: string | undefined) => [database, ...id, '\u0000', branch ?? ''].join('\u0001');

/** Every managed table with data, with its lines (undefined: main). */
function* linesOf(view: CatalogView, namespace: ObjectId = []): Generator<[ObjectId, Array<string | undefined>]> {
  for (const name of view.childTables(namespace).toArray()) {
    const table = view.table([...namespace, name]);
    if (table?.managedVersioning && table.latestVersion !== undefined) yield [table.id, [undefined, ...(table.branches?.keys() ?? [])]];
  }
  for (const child of view.childNamespaces(namespace).toArray()) yield* linesOf(view, [...namespace, child]);
}
