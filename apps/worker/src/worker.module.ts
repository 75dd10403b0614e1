import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { CatalogModule, ConfigModule } from '@app/nest-wiring';
import { QUEUES, redisConnection } from '@app/jobs';
import { ColumnBackfillProcessor } from './column-backfill.processor';
import { IndexBuildProcessor } from './index-build.processor';
import { QueryAnalysisProcessor } from './query-analysis.processor';
import { logQueueError } from './redis-errors';
import { TablePurgeProcessor } from './table-purge.processor';
import { ViewRefreshProcessor } from './view-refresh.processor';
import { TableMaintenanceProcessor } from './table-maintenance.processor';
import { MaintenancePlanner } from './maintenance-planner';

const QUEUE_NAMES = [QUEUES.indexBuilds, QUEUES.queryAnalysis, QUEUES.tablePurges, QUEUES.columnBackfills, QUEUES.viewRefreshes, QUEUES.tableMaintenance];

/** The worker role: BullMQ processors only. */
@Module({})
export class WorkerModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forConfig(config),
        CatalogModule,
        BullModule.forRoot({ connection: redisConnection(config.redisUrl), prefix: config.queuePrefix }),
        BullModule.registerQueue(...QUEUE_NAMES.map((name) => ({ name }))),
      ],
      providers: [
        IndexBuildProcessor,
        ColumnBackfillProcessor,
        ViewRefreshProcessor,
        QueryAnalysisProcessor,
        TablePurgeProcessor,
        TableMaintenanceProcessor,
        MaintenancePlanner,
        {
          // The queues registered beside the processors: their errors are logged like the workers'.
          provide: 'QUEUE_ERROR_LOG',
          inject: QUEUE_NAMES.map((name) => getQueueToken(name)),
          useFactory: (...queues: Queue[]) => queues.map((queue) => queue.on('error', (e) => logQueueError(queue.name, e))).length,
        },
      ],
    };
  }
}
