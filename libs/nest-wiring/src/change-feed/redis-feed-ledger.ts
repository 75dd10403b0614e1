import Redis from 'ioredis';
import { FeedLedger, SinkCheckpoint } from '@app/application';

/** Takes the lease if free, renews it if ours. */
const HOLD = `
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if owner then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** Fenced: only the lease's holder writes, and the revision never moves back. */
const ADVANCE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local current = tonumber(redis.call('HGET', KEYS[2], 'revision'))
local revision = tonumber(ARGV[2])
if current == nil or revision > current then redis.call('HSET', KEYS[2], 'revision', ARGV[2]) end
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], 'lastError', 'failingSince')
else redis.call('HSET', KEYS[2], 'lastError', ARGV[3], 'failingSince', ARGV[4]) end
return 1`;

/** Fenced, and moves the revision wherever it is told. */
const RESET = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], 'revision', ARGV[2])
return 1`;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const DISCOVER = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/**
 * The change feed's ledger in Redis, beside the job queues (under QUEUE_PREFIX): one lease key per
 * database with a time to live, one hash per database and sink (revision, last error, failing
 * since), the set of databases and the position up to which they were looked for. Requests fail
 * fast while Redis is away; the feed retries them.
 */
export class RedisFeedLedger implements FeedLedger {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // Connected on first use: a worker process shares the module and never uses it.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: true, connectTimeout: 2000 });
    // Errors surface on each request; the connection's own are only its retries.
    this.redis.on('error', () => undefined);
  }

  private key(...parts: string[]): string {
    return [this.prefix, 'change-feed', ...parts].join(':');
  }

  async hold(database: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(HOLD, 1, this.key('lease', database), owner, String(Math.ceil(ttlMs)))) === 1;
  }

  async release(database: string, owner: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key('lease', database), owner);
  }

  async checkpoint(database: string, sink: string): Promise<SinkCheckpoint> {
    const h = await this.redis.hgetall(this.key('checkpoint', database, sink));
    return {
      ...(h.revision !== undefined ? { revision: Number(h.revision) } : {}),
      ...(h.lastError ? { lastError: h.lastError } : {}),
      ...(h.failingSince ? { failingSince: Number(h.failingSince) } : {}),
    };
  }

  async advance(database: string, sink: string, owner: string, progress: SinkCheckpoint): Promise<boolean> {
    const result = await this.redis.eval(
      ADVANCE,
      2,
      this.key('lease', database),
      this.key('checkpoint', database, sink),
      owner,
      String(progress.revision ?? -1),
      progress.lastError ?? '',
      String(progress.failingSince ?? ''),
    );
    return result === 1;
  }

  async reset(database: string, sink: string, owner: string, revision: number): Promise<boolean> {
    return (await this.redis.eval(RESET, 2, this.key('lease', database), this.key('checkpoint', database, sink), owner, String(revision))) === 1;
  }

  async forget(database: string, sink: string): Promise<void> {
    await this.redis.del(this.key('checkpoint', database, sink));
  }

  async databases(): Promise<string[]> {
    return this.redis.smembers(this.key('databases'));
  }

  async addDatabase(database: string): Promise<void> {
    await this.redis.sadd(this.key('databases'), database);
  }

  async discovered(): Promise<bigint> {
    return BigInt((await this.redis.get(this.key('discovered'))) ?? '0');
  }

  async discover(position: bigint): Promise<void> {
    await this.redis.eval(DISCOVER, 1, this.key('discovered'), position.toString());
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
