import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { CatalogModule } from '@app/core';
import { ConfigModule } from '@app/core';
import { DataController } from './controllers/data.controller';
import { EnterpriseController } from './controllers/enterprise.controller';
import { HealthController } from './controllers/health.controller';
import { BackfillController } from './controllers/backfill.controller';
import { MaterializedViewController } from './controllers/materialized-view.controller';
import { MaintenanceController } from './controllers/maintenance.controller';
import { IndexController } from './controllers/index.controller';
import { MetricsController } from './controllers/metrics.controller';
import { MutationController } from './controllers/mutation.controller';
import { TagController } from './controllers/tag.controller';
import { BranchController } from './controllers/branch.controller';
import { HistoryController } from './controllers/history.controller';
import { NamespaceController } from './controllers/namespace.controller';
import { TableController } from './controllers/table.controller';
import { TransactionController } from './controllers/transaction.controller';
import { VersionController } from './controllers/version.controller';
import { ErrorFilter } from './http/error-filter';
import { RestRequests } from './http/rest-request.factory';

/**
 * The REST binding's controllers. They are providers rather than Nest controllers: bootstrap.ts
 * binds their routes on Fastify itself (see bindControllerRoutes).
 */
export const API_CONTROLLERS = [
  HealthController,
  MetricsController,
  NamespaceController,
  TableController,
  VersionController,
  DataController,
  IndexController,
  BackfillController,
  MaterializedViewController,
  MaintenanceController,
  MutationController,
  TagController,
  BranchController,
  EnterpriseController,
  TransactionController,
  HistoryController,
];

@Module({})
export class ApiModule {
  static forConfig(config: AppConfig, extra: DynamicModule[] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [ConfigModule.forConfig(config), CatalogModule, ...extra],
      providers: [RestRequests, ...API_CONTROLLERS, { provide: APP_FILTER, useClass: ErrorFilter }],
    };
  }
}
