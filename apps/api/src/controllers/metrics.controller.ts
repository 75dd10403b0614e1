import { Controller, Get, Header, Inject } from '@nestjs/common';
import { BullBackfillQueue, BullIndexQueue, BullQueryAnalyzer, BullViewRefreshQueue, EVENT_STORE, Metrics } from '@app/core';
import { EventStore } from '@app/event-store';
import { ProjectionRegistry } from '@app/projections';

/** Prometheus scrape endpoint; the gauges that need a look at the store or Redis are read here. */
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    private readonly projections: ProjectionRegistry,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly indexQueue: BullIndexQueue,
    private readonly backfillQueue: BullBackfillQueue,
    private readonly viewRefreshQueue: BullViewRefreshQueue,
    private readonly analyzer: BullQueryAnalyzer,
  ) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(): Promise<string> {
    const lags: [string, number][] = [];
    for (const database of this.projections.databases()) {
      const projection = this.projections.get(database);
      const head = await this.store.streamRevision(projection.streamId).catch(() => projection.state.revision);
      lags.push([database, Math.max(0, head - projection.state.revision)]);
    }
    this.metrics.recordProjectionLag(lags);
    for (const [name, queue] of [
      ['index-builds', this.indexQueue.queue],
      ['column-backfills', this.backfillQueue.queue],
      ['view-refreshes', this.viewRefreshQueue.queue],
      ['query-analysis', this.analyzer.queueForMetrics],
    ] as const) {
      const counts = await withDeadline(queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed'));
      for (const [state, n] of Object.entries(counts ?? {})) this.metrics.queueDepth.set({ queue: name, state }, n);
    }
    return this.metrics.registry.metrics();
  }
}

/** Redis being away must not stop a scrape: the queue gauges just keep their last values. */
async function withDeadline<T>(work: Promise<T>): Promise<T | undefined> {
  return Promise.race([work.catch(() => undefined), new Promise<undefined>((r) => setTimeout(() => r(undefined), 500))]);
}
