import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG } from './tokens';

@Global()
@Module({})
export class ConfigModule {
  static forConfig(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
