import { CatalogError, ErrorCode } from '@app/catalog';
import type { OperationServices } from './operation';

/**
 * Ready: the event store, Redis and the warehouse all answer, and so does the service client
 * credentials are vended by (STS), when there is one. Each check is reported.
 */
export async function readiness(s: OperationServices) {
  const checks: Record<string, string> = {
    event_store: await s.store.ping().then(() => 'ok', (e: Error) => `unavailable: ${e.message}`),
    redis: await s.queues.index.ping().then(() => 'ok', (e: Error) => `unavailable: ${e.message}`),
    warehouse: await s.warehouse.ping().then(() => 'ok', (e: Error) => `unavailable: ${s.warehouse.root}: ${e.message}`),
  };
  const vendedBy = s.vending.dependency;
  if (vendedBy) checks[vendedBy.name] = await vendedBy.ping().then(() => 'ok', (e: Error) => `unavailable: ${e.message}`);
  const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
  if (failing.length) {
    throw new CatalogError(ErrorCode.ServiceUnavailable, `not ready: ${failing.map(([k]) => k).join(', ')} unavailable`, JSON.stringify(checks));
  }
  return { status: 'ready', event_store: s.store.kind, checks };
}

/** The Prometheus scrape; the gauges that need a look at the store or Redis are read here. */
export async function scrapeMetrics(s: OperationServices): Promise<string> {
  const lags: [string, number][] = [];
  for (const database of s.projections.databases()) {
    const projection = s.projections.get(database);
    const head = await s.store.streamRevision(projection.streamId).catch(() => projection.state.revision);
    lags.push([database, Math.max(0, head - projection.state.revision)]);
  }
  s.metrics.recordProjectionLag(lags);
  for (const [name, queue] of [
    ['index-builds', s.queues.index.queue],
    ['column-backfills', s.queues.backfill.queue],
    ['view-refreshes', s.queues.viewRefresh.queue],
    ['query-analysis', s.queues.analysis.queueForMetrics],
  ] as const) {
    const counts = await withDeadline(queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed', 'completed'));
    if (!counts) continue;
    // Jobs queued with a priority (every transaction's: bull-transaction-queue.ts) wait all the same.
    const { prioritized = 0, ...states } = counts;
    states.waiting = (states.waiting ?? 0) + prioritized;
    for (const [state, n] of Object.entries(states)) s.metrics.queueDepth.set({ queue: name, state }, n);
  }
  return s.metrics.registry.metrics();
}

/** Redis being away must not stop a scrape: the queue gauges just keep their last values. */
async function withDeadline<T>(work: Promise<T>): Promise<T | undefined> {
  return Promise.race([work.catch(() => undefined), new Promise<undefined>((r) => setTimeout(() => r(undefined), 500))]);
}
