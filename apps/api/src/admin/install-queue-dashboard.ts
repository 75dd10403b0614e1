import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { BullBackfillQueue, BullIndexQueue, BullQueryAnalyzer, BullViewRefreshQueue } from '@app/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/** Bull Board over the index-build, column-backfill, view-refresh and query-analysis queues; the auth hooks require admin on every database. */
export async function installQueueDashboard(app: NestFastifyApplication): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: [
      new BullMQAdapter(app.get(BullIndexQueue).queue),
      new BullMQAdapter(app.get(BullBackfillQueue).queue),
      new BullMQAdapter(app.get(BullViewRefreshQueue).queue),
      new BullMQAdapter(app.get(BullQueryAnalyzer).queue, { readOnlyMode: true }),
    ],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Lance catalog queues' } },
  });
  await app.register(serverAdapter.registerPlugin() as never, { prefix: QUEUE_DASHBOARD_PATH });
}
