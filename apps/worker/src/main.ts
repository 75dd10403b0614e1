import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit } from '@app/config';
import { JsonLogger, createLogger } from '@app/nest-wiring';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'worker');
  const app = await NestFactory.createApplicationContext(WorkerModule.forConfig(config), { abortOnError: false, logger: new JsonLogger(logger) });
  app.enableShutdownHooks();
  new Logger('worker').log(`worker started (redis: ${config.redisUrl}, queue prefix: ${config.queuePrefix})`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
