import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import type { BullBackfillQueue, BullIndexQueue, BullQueryAnalyzer, BullViewRefreshQueue } from '@app/nest-wiring';

/** Bull Board over the index-build, column-backfill, view-refresh and query-analysis queues. */
export async function installQueueDashboard(
  fastify: FastifyInstance,
  prefix: string,
  queues: { index: BullIndexQueue; backfill: BullBackfillQueue; viewRefresh: BullViewRefreshQueue; analysis: BullQueryAnalyzer },
): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(prefix);
  createBullBoard({
    queues: [
      new BullMQAdapter(queues.index.queue),
      new BullMQAdapter(queues.backfill.queue),
      new BullMQAdapter(queues.viewRefresh.queue),
      new BullMQAdapter(queues.analysis.queue, { readOnlyMode: true }),
    ],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Lance catalog queues' } },
  });
  await fastify.register(serverAdapter.registerPlugin() as never, { prefix });
}
