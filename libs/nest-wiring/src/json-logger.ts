import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';
import { AppConfig } from '@app/config';

/** One JSON log stream per process: Fastify's request logs and Nest's own messages alike. */
export function createLogger(config: Pick<AppConfig, 'logLevel'>, role: string): Logger {
  // Written asynchronously: under load, lines written while a write is in flight go out together
  // instead of one system call each. Pending lines are flushed on exit.
  const destination = pino.destination({ dest: 1, sync: false });
  process.once('exit', () => destination.flushSync());
  return pino({ level: config.logLevel, base: { role, pid: process.pid } }, destination);
}

/** Nest's logger interface on top of pino, so framework messages are JSON lines too. */
export class JsonLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string) {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
  fatal(message: unknown, context?: string) {
    this.logger.fatal({ context }, String(message));
  }
}
