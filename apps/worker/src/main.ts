import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit } from '@app/config';
import { JsonLogger, createLogger } from '@app/nest-wiring';
import { redactedUrl } from '@app/event-store';
import { noRedisHint, redisAnswers } from '@app/jobs';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'worker');
  const app = await NestFactory.createApplicationContext(WorkerModule.forConfig(config), { abortOnError: false, logger: new JsonLogger(logger) });
  app.enableShutdownHooks();
  const log = new Logger('worker');
  log.log(`worker started (redis: ${redactedUrl(config.redisUrl)}, queue prefix: ${config.queuePrefix})`);
  if (!(await redisAnswers(config.redisUrl))) log.warn(noRedisHint(redactedUrl(config.redisUrl)));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
