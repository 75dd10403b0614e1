import Redis, { RedisOptions } from 'ioredis';
import type { ConnectionOptions } from 'bullmq';

/** Whether Redis answers a PING within `timeoutMs`, at a URL or with a queue's connection options. */
export async function redisAnswers(at: string | ConnectionOptions, timeoutMs = 1000): Promise<boolean> {
  const options: RedisOptions = { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null };
  const client = typeof at === 'string' ? new Redis(at, options) : new Redis({ ...(at as RedisOptions), ...options });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** The one line a process started without a reachable Redis logs: what waits, and how to get one. */
export function noRedisHint(shownUrl: string): string {
  return (
    `Redis does not answer at ${shownUrl} (REDIS_URL): index builds and other queued work wait until it does. ` +
    'Start one with `redis-server` (Debian: `apt-get install redis-server`), or point REDIS_URL at yours.'
  );
}
