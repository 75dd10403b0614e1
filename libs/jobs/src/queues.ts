import type { ConnectionOptions } from 'bullmq';

/** Queue names shared by the API (producers) and the workers (processors). */
export const QUEUES = {
  indexBuilds: 'index-builds',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** What a worker needs to build one index: the rest is in the catalog, under the transaction. */
export interface IndexBuildJob {
  database: string;
  transactionId: string;
  table: string[];
  indexName: string;
}

/** BullMQ connection options from a redis:// URL; requests fail fast while Redis is away. */
export function redisConnection(url: string): ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}
