import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { CatalogModule, ConfigModule } from '@app/nest-wiring';
import { QUEUES, redisConnection } from '@app/jobs';
import { ColumnBackfillProcessor } from './column-backfill.processor';
import { IndexBuildProcessor } from './index-build.processor';
import { QueryAnalysisProcessor } from './query-analysis.processor';
import { TablePurgeProcessor } from './table-purge.processor';
import { ViewRefreshProcessor } from './view-refresh.processor';
import { TableMaintenanceProcessor } from './table-maintenance.processor';
import { MaintenancePlanner } from './maintenance-planner';

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
        BullModule.registerQueue({ name: QUEUES.indexBuilds }, { name: QUEUES.queryAnalysis }, { name: QUEUES.tablePurges }, { name: QUEUES.columnBackfills }, { name: QUEUES.viewRefreshes }, { name: QUEUES.tableMaintenance }),
      ],
      providers: [IndexBuildProcessor, ColumnBackfillProcessor, ViewRefreshProcessor, QueryAnalysisProcessor, TablePurgeProcessor, TableMaintenanceProcessor, MaintenancePlanner],
    };
  }
}
