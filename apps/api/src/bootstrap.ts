import 'reflect-metadata';
import { DynamicModule, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyReply, FastifyRequest, FastifyServerOptions, LogController } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { AppConfig, authConfigured, isLoopback } from '@app/config';
import { CatalogError } from '@app/catalog';
import type { Logger as PinoLogger } from 'pino';
import { CREDENTIAL_VENDING, JsonLogger, Metrics, accessLog, createLogger } from '@app/nest-wiring';
import type { CredentialVending } from '@app/storage';
import { redactedUrl } from '@app/event-store';
import { noRedisHint, redisAnswers } from '@app/jobs';
import { ApiModule } from './api.module';
import { installAuth, routeAccess } from './auth/auth.hooks';
import { WriteFreezeWatch } from '@app/application';
import { installRateLimit } from './auth/rate-limit';
import { authenticatorFor } from './auth/authenticator.factory';
import { OPERATIONS } from './operations';
import { bindOperations } from './operations/bind-operations';
import { servicesOf } from './operations/operation-services';
import { useInputLimits } from './http/input-limits';
import { installJsonBodyParser } from './http/json-body-parser';
import { installArrowBodyParser } from './http/arrow-body-parser';
import { capConnections } from './http/connection-caps';
import { rawJsonAnswer } from './http/raw-answer';
import { installUntypedBodyParser } from './http/untyped-body-parser';
import { closeSilentConnections } from './http/first-request-wait';
import { limitBodyArrival } from './http/body-reader';
import { requestsInFlight } from './http/requests-in-flight';
import { contextHeadersProblem } from './http/context-headers';
import { installChangeFeed } from './change-feed';
import { leanFastifyAdapter } from './http/lean-adapter';

/** Builds the HTTP application: Fastify configured for the REST binding's encodings. */
export async function createApiApp(config: AppConfig, extra: DynamicModule[] = []): Promise<NestFastifyApplication> {
  useInputLimits(config.inputLimits);
  const logger = createLogger(config, extra.length ? 'api+worker' : 'api');
  const adapter = leanFastifyAdapter({
    loggerInstance: logger,
    // A caller's x-request-id is kept; otherwise each request gets one. It is logged and answered.
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // One line per request, written when it ends (below), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Requests share the process logger: the access line carries the request id itself, and a
    // child logger per request is a cost every request would pay for nothing.
    childLoggerFactory: <T>(parent: T) => parent,
    bodyLimit: config.bodyLimit,
    // Closing comes after the drain below: what is still connected then is idle, or the server's
    // own Lance client, whose pooled keep-alive connection to this server would otherwise hold the
    // close open until the pool's idle timeout.
    forceCloseConnections: true,
    // Ids are whole namespace paths: the default 100-character limit would turn long ids into 404s.
    routerOptions: { maxParamLength: 16 * 1024, ignoreTrailingSlash: true },
    // A URL Fastify cannot decode never reaches Nest: answer it in the protocol's terms here.
    // Node refuses some requests before Fastify sees them (oversized request line or headers).
    clientErrorHandler: answerClientError,
    frameworkErrors: (error: Error, request: { url: string }, reply: { code(n: number): { send(b: unknown): void } }) =>
      reply.code(400).send({ error: `malformed request: ${error.message}`, code: 13, instance: request.url.split('?')[0] }),
  } as FastifyServerOptions);
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule.forConfig(config, extra), adapter, {
    logger: new JsonLogger(logger),
    abortOnError: false,
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  // Only JSON bodies are read here (Arrow streams get their own parser with the data plane).
  fastify.removeContentTypeParser('text/plain');
  const json = config.inputLimits;
  const jsonBodies = installJsonBodyParser(fastify, {
    maxBytes: Math.min(json.jsonBodyLimit, config.bodyLimit),
    limitName: json.jsonBodyLimit <= config.bodyLimit ? 'JSON_BODY_LIMIT' : 'BODY_LIMIT',
    maxDepth: json.jsonMaxDepth,
    maxArrayItems: json.jsonMaxArrayItems,
    maxObjectKeys: json.jsonMaxObjectKeys,
  });
  // Data operations carry Arrow IPC streams; they are read by the data plane, not parsed here.
  const arrowBodies = installArrowBodyParser(fastify, config.bodyLimit);
  installUntypedBodyParser(fastify, { json: jsonBodies, arrow: arrowBodies });
  limitBodyArrival(config.requestTimeoutMs);
  closeSilentConnections(fastify.server, config.firstRequestWaitMs);
  const metrics = app.get(Metrics);
  capConnections(fastify.server, { perAddress: config.connectionsPerAddress, total: config.connectionsMax }, () => metrics.connectionsRefused.inc());
  const logRequest = accessLog(logger, config.accessLog);
  // The hooks every request passes take callbacks, not promises: about 1.5 µs a request less.
  fastify.addHook('onResponse', (request, reply, done) => {
    done();
    const labels = { operation: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) };
    metrics.requestSeconds.observe(labels, reply.elapsedTime / 1000);
    logRequest({ id: request.id, method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime });
  });
  const admitted = drainOnSignals(app, logger);
  const authenticator = authenticatorFor(config.auth);
  const services = servicesOf(app);
  const authenticate = installAuth(fastify, authenticator, config.defaultDatabase, services.projections);
  const limitInFlight = requestsInFlight(config.requestsInFlightPerPrincipal);
  const freezeWatch = app.get(WriteFreezeWatch);
  // Requests before the watch's first read are refused: it is given a while to come before listening.
  await Promise.race([freezeWatch.firstRead, new Promise((r) => setTimeout(r, FIRST_READ_WAIT_MS).unref())]);
  // One onRequest hook for every step a request takes on arrival: a Fastify hook is a call and a
  // callback of its own on every request, about half a microsecond each.
  fastify.addHook('onRequest', (request, reply, done) => {
    request.arrivedAt = performance.now();
    const problem = echoContext(request, reply, config.inputLimits.contextMaxBytes);
    if (problem) return done(problem);
    if (!routableTarget(request)) return reply.callNotFound();
    if (!admitted(request, reply)) return;
    // Nothing is answered from a store before it has said whether a load of it is unfinished.
    if (!freezeWatch.ready && routeAccess(request) !== 'public') return done(freezeWatch.refusal());
    authenticate(request, reply, (error) => (error ? done(error) : done(limitInFlight(request, reply))));
  });
  const limiterRedis = await installRateLimit(app, config.rateLimit, config.redisUrl, config.queuePrefix);
  if (limiterRedis) fastify.addHook('onClose', async () => void limiterRedis.disconnect());
  // Last, so that every hook above applies to the edge's routes and sees them registered.
  await bindOperations(fastify, { ...services, operations: OPERATIONS, authenticator });
  installChangeFeed(app, config, services, authenticator);
  return app;
}

/** Node's HTTP parser refusals, answered in the protocol's JSON like every other error. */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (socket.destroyed || !socket.writable) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request line and headers are larger than 16 KiB: shorten the id or the headers']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request took too long to arrive']
        : [400, `malformed HTTP request: ${error.message}`];
  socket.end(rawJsonAnswer(status, { error: message, code: 13 }));
}

/** How long a starting server waits for the store's first answer before it listens all the same (refusing catalog requests until it comes). */
const FIRST_READ_WAIT_MS = 5000;

/** The header the server's own Lance client sends, so its calls back into this catalog are told apart. */
export const SELF_ORIGIN = { header: 'x-lance-ctx-origin', value: 'catalog-server' };
const DRAIN_LIMIT_MS = 30_000;

/**
 * Graceful shutdown: on SIGTERM/SIGINT stop taking new work (503 code 17 with Retry-After), let the
 * requests in flight finish (they may still call back into this server through its own Lance
 * client, so those calls are let through), then close the app, which waits for running jobs.
 */
function drainOnSignals(app: NestFastifyApplication, logger: PinoLogger): (request: FastifyRequest, reply: FastifyReply) => boolean {
  let draining = false;
  let inFlight = 0;
  const admitted = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.headers[SELF_ORIGIN.header] === SELF_ORIGIN.value) return true;
    if (draining) {
      void reply.code(503).header('retry-after', '5').send({ error: 'the server is shutting down; retry on another replica', code: 17 });
      return false;
    }
    inFlight++;
    reply.raw.once('close', () => inFlight--);
    return true;
  };
  const shutdown = async (signal: string) => {
    if (draining) return;
    draining = true;
    logger.info({ signal, inFlight }, 'draining before shutdown');
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await app.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return admitted;
}

/**
 * Whether the request target is a path ("/v1/...") or an http(s) URL whose path the router reads.
 * Node accepts other targets ("*v1/namespace/a/describe", "OPTIONS *"), which the router matches as
 * if their first character were "/", while ids are read by position in the raw target: they are
 * not found, as NestJS's adapter answered them before its request hooks were left off.
 */
function routableTarget(request: FastifyRequest): boolean {
  const url = request.raw.url ?? '';
  return request.is404 || url.charCodeAt(0) === 47 || /^https?:\/\/[^/?#]+\//i.test(url);
}

/**
 * Context sent as x-lance-ctx-* headers is echoed back, as the REST binding describes. Set as the
 * request arrives, since every answer keeps them: an onSend hook would cost each request more.
 * Headers past CONTEXT_MAX_BYTES, or naming a reserved key, are refused, before anything else.
 */
function echoContext(request: FastifyRequest, reply: FastifyReply, contextMaxBytes: number): Error | undefined {
  void reply.header('x-request-id', request.id);
  const headers = request.headers;
  let bytes = 0;
  for (const name in headers) {
    const value = headers[name];
    if (name.startsWith('x-lance-ctx-') && typeof value === 'string') {
      bytes += name.length + value.length;
      void reply.header(name, value);
    }
  }
  return bytes > 0 ? contextHeadersProblem(headers, bytes, contextMaxBytes) : undefined;
}

export async function listen(app: NestFastifyApplication, config: AppConfig): Promise<string> {
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  config.selfUrl ??= `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const log = new Logger('api');
  log.log(`Lance REST catalog listening on http://${config.host}:${port} (event store: ${redactedUrl(config.eventStore)}, warehouse: ${config.warehouse})`);
  if (!authConfigured(config.auth)) {
    log.warn(
      isLoopback(config.host)
        ? `no authentication configured: serving loopback (${config.host}) only; configure AUTH_API_KEYS or AUTH_JWT_* before exposing it`
        : `no authentication configured and ALLOW_UNAUTHENTICATED_NETWORK=true: anyone who reaches ${config.host}:${port} may do anything`,
    );
  }
  // Proven before the first client asks, then on a schedule: no vended session can obtain another.
  app.get<CredentialVending>(CREDENTIAL_VENDING).start?.();
  // Not awaited: the server serves whether Redis answers or not.
  void redisAnswers(config.redisUrl).then((answers) => answers || log.warn(noRedisHint(redactedUrl(config.redisUrl))));
  return `http://${host}:${port}`;
}
