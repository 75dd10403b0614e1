import { resolve } from 'node:path';
import { z } from 'zod';
import { AuthSettings, RateLimitSettings, authConfigured, authEnvSchema, isLoopback, readAuthSettings } from './auth-settings';
import { bool, dnsServersOf, int } from './env-values';
import { InputLimits, inputLimitsEnvSchema, readInputLimits } from './input-limits';
import { ObjectStoreSettings, readWarehouseSettings } from './warehouse-settings';
import { ClientCredentials, readClientCredentials } from './credential-settings';

const schema = z.object({
  PORT: int('PORT', 2333, 0, 65535),
  HOST: z.string().min(1, 'HOST must not be empty').default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  WAREHOUSE: z.string().min(1).optional(),
  EVENT_STORE: z
    .string()
    .default('embedded')
    .refine((v) => v === 'embedded' || /^esdb(\+discover)?:\/\/.+/.test(v) || /^postgres(ql)?:\/\/.+/.test(v), {
      message:
        "EVENT_STORE must be 'embedded', an EventStoreDB connection string (esdb://host:2113?tls=false) or a PostgreSQL one (postgresql://user@host:5432/db)",
    }),
  EVENT_STORE_POOL_SIZE: int('EVENT_STORE_POOL_SIZE', 10, 1, 1000),
  REDIS_URL: z
    .string()
    .default('redis://127.0.0.1:6379')
    .refine((v) => /^rediss?:\/\/.+/.test(v), { message: 'REDIS_URL must look like redis://host:6379' }),
  QUEUE_PREFIX: z
    .string()
    .default('lance-catalog')
    .refine((v) => /^[A-Za-z0-9_.-]{1,64}$/.test(v), { message: 'QUEUE_PREFIX must be 1-64 characters of [A-Za-z0-9_.-]' }),
  MANAGED_VERSIONING: bool('MANAGED_VERSIONING', true),
  MANIFEST_DURABILITY: z.enum(['journal', 'fsync'], { message: "MANIFEST_DURABILITY must be 'journal' or 'fsync'" }).default('journal'),
  // Each flush also syncs every table directory it touched once and releases its rows in one
  // transaction: fewer, larger flushes spread those over more commits.
  MANIFEST_JOURNAL_FLUSH_MS: int('MANIFEST_JOURNAL_FLUSH_MS', 1000, 10, 60_000),
  MANIFEST_JOURNAL_SYNC_AGE_MS: int('MANIFEST_JOURNAL_SYNC_AGE_MS', 40_000, 0, 3_600_000),
  MANIFEST_JOURNAL_MAX_PENDING_BYTES: int('MANIFEST_JOURNAL_MAX_PENDING_BYTES', 64 * 1024 * 1024, 0, 2 ** 40),
  DEFAULT_DATABASE: z
    .string()
    .default('default')
    .refine((v) => /^[A-Za-z0-9_-]{1,64}$/.test(v), { message: 'DEFAULT_DATABASE must be 1-64 characters of [A-Za-z0-9_-]' }),
  BODY_LIMIT: int('BODY_LIMIT', 64 * 1024 * 1024, 1024, 2 ** 31 - 1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ACCESS_LOG: z.enum(['all', 'errors', 'off'], { message: "ACCESS_LOG must be 'all', 'errors' or 'off'" }).default('all'),
  METRICS_DATABASE_LABELS: bool('METRICS_DATABASE_LABELS', false),
  CATALOG_URL: z
    .string()
    .default('http://127.0.0.1:2333')
    .refine((v) => /^https?:\/\/[^/]+$/.test(v), { message: 'CATALOG_URL must be a base URL without a path, such as http://api:2333' }),
  INDEX_BUILD_ATTEMPTS: int('INDEX_BUILD_ATTEMPTS', 3, 1, 100),
  WORKER_CONCURRENCY: int('WORKER_CONCURRENCY', 1, 1, 64),
  JOB_LOCK_MS: int('JOB_LOCK_MS', 30_000, 500, 3_600_000),
  JOB_UNAVAILABLE_HORIZON_SECONDS: int('JOB_UNAVAILABLE_HORIZON_SECONDS', 600, 0, 7 * 24 * 3600),
  JOB_UNAVAILABLE_BASE_DELAY_MS: int('JOB_UNAVAILABLE_BASE_DELAY_MS', 1000, 10, 600_000),
  ANALYZE_TIMEOUT_MS: int('ANALYZE_TIMEOUT_MS', 30_000, 100, 3_600_000),
  TABLE_CACHE_SIZE: int('TABLE_CACHE_SIZE', 256, 0, 100_000),
  HNSW_CACHE_SIZE: int('HNSW_CACHE_SIZE', 8, 1, 10_000),
  SELF_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || /^https?:\/\/[^/]+$/.test(v), {
      message: 'SELF_URL must be a base URL without a path, such as http://127.0.0.1:2333',
    }),
  ...authEnvSchema,
  ALLOW_UNAUTHENTICATED_NETWORK: bool('ALLOW_UNAUTHENTICATED_NETWORK', false),
  RATE_LIMIT_MAX: int('RATE_LIMIT_MAX', 0, 0, 1_000_000_000),
  RATE_LIMIT_WINDOW_MS: int('RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
  SNAPSHOT_EVERY: int('SNAPSHOT_EVERY', 100_000, 0, 1_000_000_000),
  SNAPSHOT_DIR: z.string().min(1).optional(),
  MANIFEST_PUBLISH_WAIT_MS: int('MANIFEST_PUBLISH_WAIT_MS', 30_000, 0, 600_000),
  DROP_RETENTION_SECONDS: int('DROP_RETENTION_SECONDS', 7 * 24 * 3600, 0, 10 * 365 * 24 * 3600),
  DATA_PLANE_PROCESSES: int('DATA_PLANE_PROCESSES', 2, 0, 256),
  TRANSACTION_MEMORY_SECONDS: int('TRANSACTION_MEMORY_SECONDS', 86_400, 0, 100 * 365 * 86_400),
  MAINTENANCE_PLANNER: bool('MAINTENANCE_PLANNER', true),
  MAINTENANCE_PLAN_DELAY_MS: int('MAINTENANCE_PLAN_DELAY_MS', 2000, 0, 3_600_000),
  MAINTENANCE_PLAN_MAX_DELAY_MS: int('MAINTENANCE_PLAN_MAX_DELAY_MS', 30_000, 0, 3_600_000),
  MAINTENANCE_SWEEP_SECONDS: int('MAINTENANCE_SWEEP_SECONDS', 600, 1, 86_400 * 7),
  BRANCH_CREATE_GRACE_SECONDS: int('BRANCH_CREATE_GRACE_SECONDS', 120, 1, 86_400),
  MAINTENANCE_COMPACT: bool('MAINTENANCE_COMPACT', true),
  MAINTENANCE_COMPACT_MAX_FRAGMENTS: int('MAINTENANCE_COMPACT_MAX_FRAGMENTS', 64, 1, 1_000_000_000),
  MAINTENANCE_COMPACT_MAX_SMALL_FRAGMENTS: int('MAINTENANCE_COMPACT_MAX_SMALL_FRAGMENTS', 16, 1, 1_000_000_000),
  MAINTENANCE_SMALL_FRAGMENT_ROWS: int('MAINTENANCE_SMALL_FRAGMENT_ROWS', 100_000, 1, 1_000_000_000),
  MAINTENANCE_OPTIMIZE_INDICES: bool('MAINTENANCE_OPTIMIZE_INDICES', true),
  MAINTENANCE_MAX_UNINDEXED_ROWS: int('MAINTENANCE_MAX_UNINDEXED_ROWS', 10_000, 0, 1_000_000_000),
  MAINTENANCE_HNSW_REBUILD_PERCENT: int('MAINTENANCE_HNSW_REBUILD_PERCENT', 20, 0, 1_000_000),
  MAINTENANCE_EXPIRE_OLDER_THAN_SECONDS: int('MAINTENANCE_EXPIRE_OLDER_THAN_SECONDS', -1, 0, 100 * 365 * 86_400),
  MAINTENANCE_EXPIRE_KEEP_LAST: int('MAINTENANCE_EXPIRE_KEEP_LAST', -1, 1, 1_000_000_000),
  MAINTENANCE_EXPIRY_MARGIN_SECONDS: int('MAINTENANCE_EXPIRY_MARGIN_SECONDS', 60, 0, 86_400),
  DATA_PLANE_MEMORY_MB: int('DATA_PLANE_MEMORY_MB', 2048, 256, 1_048_576),
  DATA_PLANE_TIMEOUT_MS: int('DATA_PLANE_TIMEOUT_MS', 60_000, 100, 86_400_000),
  // 0: all the processes but one, so another database always finds one within an operation's time.
  DATA_PLANE_PROCESSES_PER_DATABASE: int('DATA_PLANE_PROCESSES_PER_DATABASE', 0, 0, 256),
  DATA_PLANE_QUEUE_PER_DATABASE: int('DATA_PLANE_QUEUE_PER_DATABASE', 64, 1, 1_000_000),
  LIVE_FEEDS_PER_PRINCIPAL: int('LIVE_FEEDS_PER_PRINCIPAL', 8, 1, 1_000_000),
  REQUESTS_IN_FLIGHT_PER_PRINCIPAL: int('REQUESTS_IN_FLIGHT_PER_PRINCIPAL', 128, 0, 1_000_000),
  REQUEST_TIMEOUT_MS: int('REQUEST_TIMEOUT_MS', 120_000, 0, 24 * 3_600_000),
  FIRST_REQUEST_WAIT_MS: int('FIRST_REQUEST_WAIT_MS', 30_000, 100, 3_600_000),
  // 0: no cap, for a server behind a proxy whose connections all come from its one address.
  CONNECTIONS_PER_ADDRESS: int('CONNECTIONS_PER_ADDRESS', 512, 0, 1_000_000),
  // Well below the descriptors a process is commonly given, so its own files still open.
  CONNECTIONS_MAX: int('CONNECTIONS_MAX', 8192, 0, 10_000_000),
  LIVE_FEEDS_MAX: int('LIVE_FEEDS_MAX', 256, 1, 1_000_000),
  CHANGE_FEED_NATS_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^(nats|tls):\/\/[^\s]+$/.test(v), { message: 'CHANGE_FEED_NATS_URL must look like nats://host:4222' }),
  CHANGE_FEED_NATS_STREAM: z
    .string()
    .default('LANCE_CATALOG')
    .refine((v) => /^[A-Za-z0-9_-]{1,64}$/.test(v), { message: 'CHANGE_FEED_NATS_STREAM must be 1-64 characters of [A-Za-z0-9_-]' }),
  CHANGE_FEED_LEASE_SECONDS: int('CHANGE_FEED_LEASE_SECONDS', 10, 1, 3600),
  WEBHOOK_SECRET_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || v.length >= 32, { message: 'WEBHOOK_SECRET_KEY must be at least 32 characters (e.g. `openssl rand -hex 32`)' }),
  WEBHOOK_GIVE_UP_SECONDS: int('WEBHOOK_GIVE_UP_SECONDS', 86_400, 1, 365 * 86_400),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
  WEBHOOK_TIMEOUT_MS: int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
  WEBHOOK_DNS_SERVERS: z
    .string()
    .optional()
    .refine((v) => v === undefined || v.trim() === '' || dnsServersOf(v) !== undefined, {
      message: 'WEBHOOK_DNS_SERVERS must be a comma-separated list of name server addresses, each an IP address with an optional port (10.0.0.2, 10.0.0.3:5353, [::1]:53)',
    }),
  ...inputLimitsEnvSchema,
});

/** The deployment's default maintenance policy (libs/catalog's MaintenancePolicy, which config does not import). */
export interface MaintenancePolicyDefaults {
  compact: boolean;
  compactMaxFragments: number;
  compactMaxSmallFragments: number;
  smallFragmentRows: number;
  optimizeIndices: boolean;
  maxUnindexedRows: number;
  hnswRebuildPercent: number;
  expireOlderThanSeconds?: number;
  expireKeepLast?: number;
}

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** The root of every table location: an absolute local path, or `s3://bucket/prefix`. */
  warehouse: string;
  /** Set when the warehouse is on an object store. */
  objectStore?: ObjectStoreSettings;
  eventStore: string;
  /** Connections a PostgreSQL event store keeps open in this process. */
  eventStorePoolSize: number;
  redisUrl: string;
  queuePrefix: string;
  managedVersioning: boolean;
  /**
   * How a finalised manifest becomes durable: `journal` records its bytes in the event store's
   * own durable write (stores that can) and syncs the file later; `fsync` syncs it before the event.
   */
  manifestDurability: 'journal' | 'fsync';
  manifestJournalFlushMs: number;
  manifestJournalSyncAgeMs: number;
  manifestJournalMaxPendingBytes: number;
  defaultDatabase: string;
  bodyLimit: number;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  /** Which requests get a line when they finish: every one, only answers of 400 and above, or none. */
  accessLog: 'all' | 'errors' | 'off';
  /** Whether `/metrics` names each database in a label; off, series are summed over databases. */
  metricsDatabaseLabels: boolean;
  /** The address the server's own Lance client uses to reach this catalog; set when bound. */
  selfUrl?: string;
  /** Where a worker without its own API reaches the catalog. */
  catalogUrl: string;
  indexBuildAttempts: number;
  workerConcurrency: number;
  analyzeTimeoutMs: number;
  /** How long a job stays claimed without a heartbeat before another worker may take it over. */
  jobLockMs: number;
  /**
   * A job that finds a service it needs unavailable (code 17) waits, its delays doubling from
   * `baseDelayMs` with jitter, and fails once `horizonMs` have passed.
   */
  jobUnavailable: { horizonMs: number; baseDelayMs: number };
  /** How many managed tables a process keeps open for its own reads and writes (0: open per request). */
  tableCacheSize: number;
  /** HNSW graphs (with their tables' live row ids) each process keeps loaded. */
  hnswCacheSize: number;
  auth: AuthSettings;
  rateLimit: RateLimitSettings;
  /** Events folded between two snapshots of a database's state; 0: no snapshots, every start folds the whole log. */
  snapshotEvery: number;
  snapshotDir: string;
  /**
   * On an object store: how long a recorded commit waits, before it is answered, for a store that
   * cannot take the copy of its manifest to the final name (then tried in the background).
   */
  manifestPublishWaitMs: number;
  /** How long a dropped table's files are kept before a worker purges them (0: at once). */
  dropRetentionSeconds: number;
  /** How many processes run data operations apart from this one, one operation each at a time (0: in this process). */
  dataPlaneProcesses: number;
  /** The resident memory a data-plane process may reach while it runs one operation. */
  dataPlaneMemoryBytes: number;
  /** How long one data operation may run before its process is killed. */
  dataPlaneTimeoutMs: number;
  /** How many data-plane processes one database's operations may hold at once (0: all but one). */
  dataPlanePerDatabase: number;
  /** How many of one database's data operations may wait for a process before more are refused (503). */
  dataPlaneQueuePerDatabase: number;
  /** Live history feeds (`/v1/history/live`) open at once: per principal, and in all. */
  liveFeeds: { perPrincipal: number; max: number };
  /** Requests one authenticated principal may have in flight at once (0: no limit); the server's own calls are not counted. */
  requestsInFlightPerPrincipal: number;
  /** How long a request's body may take to arrive, from the request's arrival (0: no limit). */
  requestTimeoutMs: number;
  /** How long a new connection may stay silent before its first request. */
  firstRequestWaitMs: number;
  /** Connections one client address may hold open at once (0: no cap). */
  connectionsPerAddress: number;
  /** Connections all clients may hold open at once (0: no cap). */
  connectionsMax: number;
  /** How long a finished transaction stays in a process's memory after it started (0: for good); the log keeps it. */
  transactionMemorySeconds: number;
  /** Table maintenance: the default policy (table and namespace properties override it) and the workers' planner. */
  maintenance: {
    planner: boolean;
    planDelayMs: number;
    /** The longest a line with commits waits to be looked at, however steadily they come. */
    planMaxDelayMs: number;
    sweepSeconds: number;
    /** How old a branch must be before the planner finishes a ref file its create left unwritten. */
    branchCreateGraceMs: number;
    expiryMarginMs: number;
    defaults: MaintenancePolicyDefaults;
  };
  /** What one request may carry, checked before any parser reads it. */
  inputLimits: InputLimits;
  /** What clients are handed to reach a table's files: static options or STS sessions per table. */
  clientCredentials: ClientCredentials;
  /**
   * The change feed: every event of every database as a CloudEvent, to NATS JetStream when `natsUrl`
   * is set and to webhook subscriptions when `webhookSecretKey` is. Neither set: nothing runs.
   */
  changeFeed: {
    natsUrl?: string;
    natsStream: string;
    leaseMs: number;
    /** The key each subscription's signing secret is derived from; creating subscriptions needs it. */
    webhookSecretKey?: string;
    webhookGiveUpMs: number;
    webhookAllowPrivateNetworks: boolean;
    webhookTimeoutMs: number;
    /** The name servers webhooks' hosts are asked of; absent: the system's. */
    webhookDnsServers?: string[];
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and checks every setting at start-up, so a bad value stops the process with a clear reason. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => (i.path.length ? `${String(i.path[0])}: ${i.message}` : i.message)));
  }
  const c = parsed.data;
  const { settings: auth, problems } = readAuthSettings(c, c.ALLOW_UNAUTHENTICATED_NETWORK);
  if (auth && !authConfigured(auth) && !isLoopback(c.HOST) && !c.ALLOW_UNAUTHENTICATED_NETWORK) {
    problems.push(
      `HOST: ${c.HOST} would expose the catalog to the network without authentication. ` +
        'Configure AUTH_API_KEYS(_FILE) or AUTH_JWT_*, or set ALLOW_UNAUTHENTICATED_NETWORK=true if a proxy in front authenticates.',
    );
  }
  const dataDir = resolve(c.DATA_DIR);
  const warehouse = readWarehouseSettings(env, dataDir, problems);
  const clientCredentials = readClientCredentials(env, warehouse.objectStore, problems);
  if (problems.length || !auth) throw new ConfigError(problems);
  return {
    port: c.PORT,
    host: c.HOST,
    dataDir,
    warehouse: warehouse.root,
    objectStore: warehouse.objectStore,
    eventStore: c.EVENT_STORE,
    eventStorePoolSize: c.EVENT_STORE_POOL_SIZE,
    redisUrl: c.REDIS_URL,
    queuePrefix: c.QUEUE_PREFIX,
    managedVersioning: c.MANAGED_VERSIONING,
    manifestDurability: c.MANIFEST_DURABILITY,
    manifestJournalFlushMs: c.MANIFEST_JOURNAL_FLUSH_MS,
    manifestJournalSyncAgeMs: c.MANIFEST_JOURNAL_SYNC_AGE_MS,
    manifestJournalMaxPendingBytes: c.MANIFEST_JOURNAL_MAX_PENDING_BYTES,
    defaultDatabase: c.DEFAULT_DATABASE,
    bodyLimit: c.BODY_LIMIT,
    logLevel: c.LOG_LEVEL,
    accessLog: c.ACCESS_LOG,
    metricsDatabaseLabels: c.METRICS_DATABASE_LABELS,
    selfUrl: c.SELF_URL,
    catalogUrl: c.CATALOG_URL,
    indexBuildAttempts: c.INDEX_BUILD_ATTEMPTS,
    workerConcurrency: c.WORKER_CONCURRENCY,
    analyzeTimeoutMs: c.ANALYZE_TIMEOUT_MS,
    jobLockMs: c.JOB_LOCK_MS,
    jobUnavailable: { horizonMs: c.JOB_UNAVAILABLE_HORIZON_SECONDS * 1000, baseDelayMs: c.JOB_UNAVAILABLE_BASE_DELAY_MS },
    tableCacheSize: c.TABLE_CACHE_SIZE,
    hnswCacheSize: c.HNSW_CACHE_SIZE,
    auth,
    rateLimit: { max: c.RATE_LIMIT_MAX, windowMs: c.RATE_LIMIT_WINDOW_MS },
    snapshotEvery: c.SNAPSHOT_EVERY,
    snapshotDir: resolve(c.SNAPSHOT_DIR ?? `${dataDir}/snapshots`),
    manifestPublishWaitMs: c.MANIFEST_PUBLISH_WAIT_MS,
    dropRetentionSeconds: c.DROP_RETENTION_SECONDS,
    dataPlaneProcesses: c.DATA_PLANE_PROCESSES,
    dataPlaneMemoryBytes: c.DATA_PLANE_MEMORY_MB * 1024 * 1024,
    dataPlaneTimeoutMs: c.DATA_PLANE_TIMEOUT_MS,
    dataPlanePerDatabase: c.DATA_PLANE_PROCESSES_PER_DATABASE,
    dataPlaneQueuePerDatabase: c.DATA_PLANE_QUEUE_PER_DATABASE,
    liveFeeds: { perPrincipal: c.LIVE_FEEDS_PER_PRINCIPAL, max: c.LIVE_FEEDS_MAX },
    requestsInFlightPerPrincipal: c.REQUESTS_IN_FLIGHT_PER_PRINCIPAL,
    requestTimeoutMs: c.REQUEST_TIMEOUT_MS,
    firstRequestWaitMs: c.FIRST_REQUEST_WAIT_MS,
    connectionsPerAddress: c.CONNECTIONS_PER_ADDRESS,
    connectionsMax: c.CONNECTIONS_MAX,
    transactionMemorySeconds: c.TRANSACTION_MEMORY_SECONDS,
    maintenance: {
      planner: c.MAINTENANCE_PLANNER,
      planDelayMs: c.MAINTENANCE_PLAN_DELAY_MS,
      planMaxDelayMs: c.MAINTENANCE_PLAN_MAX_DELAY_MS,
      sweepSeconds: c.MAINTENANCE_SWEEP_SECONDS,
      branchCreateGraceMs: c.BRANCH_CREATE_GRACE_SECONDS * 1000,
      expiryMarginMs: c.MAINTENANCE_EXPIRY_MARGIN_SECONDS * 1000,
      defaults: {
        compact: c.MAINTENANCE_COMPACT,
        compactMaxFragments: c.MAINTENANCE_COMPACT_MAX_FRAGMENTS,
        compactMaxSmallFragments: c.MAINTENANCE_COMPACT_MAX_SMALL_FRAGMENTS,
        smallFragmentRows: c.MAINTENANCE_SMALL_FRAGMENT_ROWS,
        optimizeIndices: c.MAINTENANCE_OPTIMIZE_INDICES,
        maxUnindexedRows: c.MAINTENANCE_MAX_UNINDEXED_ROWS,
        hnswRebuildPercent: c.MAINTENANCE_HNSW_REBUILD_PERCENT,
        ...(c.MAINTENANCE_EXPIRE_OLDER_THAN_SECONDS >= 0 ? { expireOlderThanSeconds: c.MAINTENANCE_EXPIRE_OLDER_THAN_SECONDS } : {}),
        ...(c.MAINTENANCE_EXPIRE_KEEP_LAST >= 1 ? { expireKeepLast: c.MAINTENANCE_EXPIRE_KEEP_LAST } : {}),
      },
    },
    inputLimits: readInputLimits(c),
    clientCredentials,
    changeFeed: {
      ...(c.CHANGE_FEED_NATS_URL ? { natsUrl: c.CHANGE_FEED_NATS_URL } : {}),
      natsStream: c.CHANGE_FEED_NATS_STREAM,
      leaseMs: c.CHANGE_FEED_LEASE_SECONDS * 1000,
      ...(c.WEBHOOK_SECRET_KEY ? { webhookSecretKey: c.WEBHOOK_SECRET_KEY } : {}),
      webhookGiveUpMs: c.WEBHOOK_GIVE_UP_SECONDS * 1000,
      webhookAllowPrivateNetworks: c.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      webhookTimeoutMs: c.WEBHOOK_TIMEOUT_MS,
      ...(c.WEBHOOK_DNS_SERVERS?.trim() ? { webhookDnsServers: dnsServersOf(c.WEBHOOK_DNS_SERVERS) } : {}),
    },
  };
}

/** For entry points: a bad setting ends the process with its reasons and exit code 2. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): AppConfig {
  try {
    return loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(2);
    }
    throw e;
  }
}

/** JOB_LOCK_MS alone, for decorators evaluated at load time; a bad value is reported by loadConfigOrExit. */
export function jobLockMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = schema.shape.JOB_LOCK_MS.safeParse(env.JOB_LOCK_MS);
  return parsed.success ? parsed.data : 30_000;
}
