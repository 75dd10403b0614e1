import rateLimit from '@fastify/rate-limit';
import { CatalogError, ErrorCode } from '@app/catalog';
import type { RateLimitSettings } from '@app/config';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Redis } from 'ioredis';
import { accessOf } from './access-policy';

/**
 * Per-principal request limits (429 code 21 with Retry-After), counted in Redis so that every
 * replica behind a balancer shares one budget. If Redis is away requests are let through: an
 * outage of the counter must not become an outage of the catalog.
 */
export async function installRateLimit(app: NestFastifyApplication, settings: RateLimitSettings, redisUrl: string, prefix: string): Promise<Redis | undefined> {
  if (settings.max === 0) return undefined;
  const redis = new Redis(redisUrl, { connectTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  redis.on('error', () => undefined);
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: settings.max,
    timeWindow: settings.windowMs,
    redis,
    nameSpace: `${prefix}:rate-limit:`,
    skipOnError: true,
    keyGenerator: (request) => (request.principal ? `p:${request.principal.via}:${request.principal.name}` : `ip:${request.ip}`),
    // The server's own calls were counted as the request that caused them; probes are never limited.
    allowList: (request) =>
      request.principal?.via === 'service' || (request.routeOptions.url !== undefined && accessOf(request.method, request.routeOptions.url) === 'public'),
    // Thrown by the plugin, so it reaches the error filter like any other refusal.
    errorResponseBuilder: (_request, context) =>
      new CatalogError(
        ErrorCode.Throttling,
        `too many requests: at most ${context.max} per ${context.after} for each caller`,
        `retry after ${Math.ceil(context.ttl / 1000)} s (Retry-After)`,
      ),
  });
  return redis;
}
