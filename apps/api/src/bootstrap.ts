import 'reflect-metadata';
import { DynamicModule, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppConfig } from '@app/config';
import { ApiModule } from './api.module';

/** Builds the HTTP application: Fastify configured for the REST binding's encodings. */
export async function createApiApp(config: AppConfig, extra: DynamicModule[] = []): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimit,
    // Ids are whole namespace paths: the default 100-character limit would turn long ids into 404s.
    routerOptions: { maxParamLength: 16 * 1024, ignoreTrailingSlash: true },
    // A URL Fastify cannot decode never reaches Nest: answer it in the protocol's terms here.
    frameworkErrors: (error: Error, request: { url: string }, reply: { code(n: number): { send(b: unknown): void } }) =>
      reply.code(400).send({ error: `malformed request: ${error.message}`, code: 13, instance: request.url.split('?')[0] }),
  } as ConstructorParameters<typeof FastifyAdapter>[0]);
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forConfig(config, extra), adapter, {
    logger: config.logLevel === 'silent' ? false : nestLogLevels(config.logLevel),
    abortOnError: false,
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  // Only JSON bodies are read here (Arrow streams get their own parser with the data plane).
  fastify.removeContentTypeParser('text/plain');
  // ListTableVersions sends the JSON literal `null`, and curl users send empty bodies: both are {}.
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      const err = e as Error & { statusCode?: number; code?: string };
      err.statusCode = 400;
      err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(err, undefined);
    }
  });
  // Data operations carry Arrow IPC streams; they are read by the data plane, not parsed here.
  fastify.addContentTypeParser('application/vnd.apache.arrow.stream', { parseAs: 'buffer', bodyLimit: config.bodyLimit }, (_req, body, done) =>
    done(null, body),
  );
  // Context sent as x-lance-ctx-* headers is echoed back, as the REST binding describes.
  fastify.addHook('onSend', async (request, reply) => {
    for (const [name, value] of Object.entries(request.headers)) {
      if (name.startsWith('x-lance-ctx-') && typeof value === 'string') reply.header(name, value);
    }
  });
  app.enableShutdownHooks();
  return app;
}

function nestLogLevels(level: AppConfig['logLevel']) {
  const order = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
  const cut = { fatal: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5, silent: -1 }[level];
  return order.slice(0, cut + 1) as unknown as ('fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose')[];
}

export async function listen(app: NestFastifyApplication, config: AppConfig): Promise<string> {
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  config.selfUrl ??= `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  new Logger('api').log(`Lance REST catalog listening on http://${config.host}:${port} (event store: ${config.eventStore}, warehouse: ${config.warehouse})`);
  return `http://${host}:${port}`;
}
