import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { CatalogModule, ConfigModule } from '@app/nest-wiring';
import { ErrorFilter } from './http/error-filter';

/**
 * The API process's providers. Its routes are no Nest controllers: they are the entries of
 * operations/index.ts, bound on Fastify by bootstrap.ts.
 */
@Module({})
export class ApiModule {
  static forConfig(config: AppConfig, extra: DynamicModule[] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [ConfigModule.forConfig(config), CatalogModule, ...extra],
      providers: [{ provide: APP_FILTER, useClass: ErrorFilter }],
    };
  }
}
