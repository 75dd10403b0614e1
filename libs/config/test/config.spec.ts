import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../src';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 2333,
      host: '127.0.0.1',
      eventStore: 'embedded',
      redisUrl: 'redis://127.0.0.1:6379',
      managedVersioning: true,
      defaultDatabase: 'default',
    });
    expect(c.dataDir).toBe(resolve('./data'));
    expect(c.warehouse).toBe(resolve('./data/warehouse'));
    expect(c.snapshotDir).toBe(resolve('./data/snapshots'));
    expect(c.snapshotEvery).toBe(100_000);
    expect(c).toMatchObject({ accessLog: 'all', manifestDurability: 'journal', manifestJournalFlushMs: 1000, manifestJournalSyncAgeMs: 40_000, manifestJournalMaxPendingBytes: 64 * 1024 * 1024 });
    expect(c).toMatchObject({ tableCacheSize: 256, hnswCacheSize: 8 });
    expect(c.inputLimits).toEqual({
      sqlExpression: { maxBytes: 1024 * 1024, maxTerms: 10_000, maxDepth: 100, maxRepeat: 1000 },
      arrow: { maxFields: 10_000, maxDepth: 64, maxNodes: 100_000, maxDictionaryBatches: 1000 },
      properties: { maxCount: 1000, maxBytes: 64 * 1024 },
      contextMaxBytes: 8 * 1024,
      jsonMaxDepth: 64,
      jsonMaxArrayItems: 65_536,
      jsonMaxObjectKeys: 10_000,
      jsonBodyLimit: 4 * 1024 * 1024,
    });
    expect(c.jobUnavailable).toEqual({ horizonMs: 600_000, baseDelayMs: 1000 });
  });

  it('reads the input limits', () => {
    const c = loadConfig({
      SQL_EXPRESSION_MAX_BYTES: '4096',
      SQL_EXPRESSION_MAX_TERMS: '500',
      SQL_EXPRESSION_MAX_DEPTH: '20',
      SQL_EXPRESSION_MAX_REPEAT: '10',
      ARROW_MAX_FIELDS: '100',
      ARROW_MAX_DEPTH: '4',
      ARROW_MAX_NODES: '1000',
      PROPERTIES_MAX_COUNT: '10',
      PROPERTIES_MAX_BYTES: '1024',
      CONTEXT_MAX_BYTES: '512',
      JSON_MAX_DEPTH: '16',
      JSON_MAX_ARRAY_ITEMS: '100',
      JSON_MAX_OBJECT_KEYS: '50',
      JSON_BODY_LIMIT: '65536',
      ARROW_MAX_DICTIONARY_BATCHES: '7',
    });
    expect(c.inputLimits).toEqual({
      sqlExpression: { maxBytes: 4096, maxTerms: 500, maxDepth: 20, maxRepeat: 10 },
      arrow: { maxFields: 100, maxDepth: 4, maxNodes: 1000, maxDictionaryBatches: 7 },
      properties: { maxCount: 10, maxBytes: 1024 },
      contextMaxBytes: 512,
      jsonMaxDepth: 16,
      jsonMaxArrayItems: 100,
      jsonMaxObjectKeys: 50,
      jsonBodyLimit: 65_536,
    });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/x',
      WAREHOUSE: '/tmp/wh',
      EVENT_STORE: 'esdb://localhost:2113?tls=false',
      REDIS_URL: 'redis://r:6380/2',
      MANAGED_VERSIONING: 'false',
      DEFAULT_DATABASE: 'main',
      BODY_LIMIT: '2048',
      LOG_LEVEL: 'debug',
      ALLOW_UNAUTHENTICATED_NETWORK: 'true',
      RATE_LIMIT_MAX: '100',
      RATE_LIMIT_WINDOW_MS: '1000',
      AUTH_SERVICE_KEY: 'k'.repeat(40),
      SNAPSHOT_EVERY: '0',
      SNAPSHOT_DIR: '/tmp/snaps',
      HNSW_CACHE_SIZE: '2',
      JOB_UNAVAILABLE_HORIZON_SECONDS: '20',
      JOB_UNAVAILABLE_BASE_DELAY_MS: '200',
    });
    expect(c.jobUnavailable).toEqual({ horizonMs: 20_000, baseDelayMs: 200 });
    expect(c).toMatchObject({ snapshotEvery: 0, snapshotDir: '/tmp/snaps', hnswCacheSize: 2 });
    expect(c).toMatchObject({ port: 9000, host: '0.0.0.0', dataDir: '/tmp/x', warehouse: '/tmp/wh', managedVersioning: false, bodyLimit: 2048 });
    expect(c.rateLimit).toEqual({ max: 100, windowMs: 1000 });
    expect(c.auth).toMatchObject({ serviceKey: 'k'.repeat(40), allowUnauthenticatedNetwork: true, apiKeys: [] });
  });

  it('reads API keys and JWT settings', () => {
    const c = loadConfig({
      AUTH_API_KEYS: JSON.stringify([{ principal: 'etl', sha256: 'a'.repeat(64), databases: ['main', '*'], level: 'write' }]),
      AUTH_JWT_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
      AUTH_JWT_ISSUER: 'https://idp.example/',
      AUTH_JWT_AUDIENCE: 'lance',
      HOST: '0.0.0.0',
    });
    expect(c.auth.apiKeys).toEqual([{ principal: 'etl', sha256: 'a'.repeat(64), databases: ['main', '*'], level: 'write' }]);
    expect(c.auth.jwt).toMatchObject({ jwksUrl: 'https://idp.example/.well-known/jwks.json', algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'], scopePrefix: 'lance' });
    expect(c.auth.serviceKey.length).toBeGreaterThanOrEqual(32);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['EVENT_STORE', 'mysql://x'],
    ['EVENT_STORE_POOL_SIZE', '0'],
    ['REDIS_URL', 'localhost'],
    ['MANAGED_VERSIONING', 'maybe'],
    ['DEFAULT_DATABASE', '../x'],
    ['BODY_LIMIT', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['SELF_URL', 'ftp://x/y'],
    ['AUTH_API_KEYS', '{not json'],
    ['AUTH_API_KEYS', '[{"principal":"x","sha256":"zz","databases":["*"],"level":"read"}]'],
    ['AUTH_JWT_SECRET', 'short'],
    ['AUTH_JWT_JWKS_URL', 'ldap://x'],
    ['AUTH_SERVICE_KEY', 'short'],
    ['RATE_LIMIT_MAX', '-3'],
    ['SNAPSHOT_EVERY', 'often'],
    ['SNAPSHOT_EVERY', '-1'],
    ['ACCESS_LOG', 'some'],
    ['MANIFEST_DURABILITY', 'never'],
    ['MANIFEST_JOURNAL_FLUSH_MS', '0'],
    ['MANIFEST_JOURNAL_SYNC_AGE_MS', '-1'],
    ['MANIFEST_JOURNAL_MAX_PENDING_BYTES', 'lots'],
    ['HNSW_CACHE_SIZE', '0'],
    ['SQL_EXPRESSION_MAX_TERMS', '0'],
    ['SQL_EXPRESSION_MAX_DEPTH', 'deep'],
    ['ARROW_MAX_FIELDS', '1.5'],
    ['PROPERTIES_MAX_COUNT', '-1'],
    ['CONTEXT_MAX_BYTES', '1'],
    ['JSON_MAX_DEPTH', '0'],
    ['JOB_UNAVAILABLE_HORIZON_SECONDS', 'forever'],
    ['JOB_UNAVAILABLE_BASE_DELAY_MS', '0'],
    ['HOST', '0.0.0.0'],
    ['WEBHOOK_DNS_SERVERS', 'dns.example.com'],
    ['WEBHOOK_DNS_SERVERS', '10.0.0.2:99999'],
    ['WEBHOOK_DNS_SERVERS', '10.0.0.2,,10.0.0.3'],
  ])('names %s when its value %s is bad', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      expect((e as Error).message).toContain(name);
    }
  });

  it('reads the name servers webhooks ask, the system\'s when none is named', () => {
    expect(loadConfig({}).changeFeed.webhookDnsServers).toBeUndefined();
    expect(loadConfig({ WEBHOOK_DNS_SERVERS: ' 10.0.0.2, 10.0.0.3:5353,[::1]:53,fd00::53 ' }).changeFeed.webhookDnsServers).toEqual(['10.0.0.2', '10.0.0.3:5353', '[::1]:53', 'fd00::53']);
  });

  it('stops the server process with exit code 2 and the reason', () => {
    const run = spawnSync(process.execPath, [resolve(__dirname, '../../../dist/apps/api/src/main.js')], {
      env: { ...process.env, PORT: 'nope' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('PORT');
  });

  it('takes an s3:// warehouse with the AWS variables: an http endpoint allows http and means path style', () => {
    const c = loadConfig({
      WAREHOUSE: 's3://my-bucket/lance/prod/',
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'SECRET',
      AWS_REGION: 'eu-west-1',
      AWS_ENDPOINT_URL: 'http://minio:9000',
      WAREHOUSE_STORAGE_OPTIONS: '{"aws_server_side_encryption":"AES256","timeout":30}',
      CLIENT_STORAGE_OPTIONS: '{"aws_access_key_id":"CLIENT","aws_secret_access_key":"CS"}',
      CLIENT_STORAGE_OPTIONS_BY_DATABASE: '{"sales":{"aws_session_token":"T"}}',
    });
    expect(c.warehouse).toBe('s3://my-bucket/lance/prod');
    expect(c.objectStore).toMatchObject({
      bucket: 'my-bucket',
      prefix: 'lance/prod',
      region: 'eu-west-1',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'SECRET' },
    });
    expect(c.objectStore!.serverOptions).toEqual({
      aws_region: 'eu-west-1',
      aws_endpoint: 'http://minio:9000',
      aws_virtual_hosted_style_request: 'false',
      allow_http: 'true',
      aws_access_key_id: 'AKID',
      aws_secret_access_key: 'SECRET',
      aws_server_side_encryption: 'AES256',
      timeout: '30',
    });
    // Clients get how to reach the store and what the operator gave them: never the server's keys.
    expect(c.objectStore!.clientOptions).toEqual({
      aws_region: 'eu-west-1',
      aws_endpoint: 'http://minio:9000',
      aws_virtual_hosted_style_request: 'false',
      allow_http: 'true',
      aws_access_key_id: 'CLIENT',
      aws_secret_access_key: 'CS',
    });
    expect(c.objectStore!.clientOptionsByDatabase).toEqual({ sales: { aws_session_token: 'T' } });
    const plain = loadConfig({ WAREHOUSE: 's3://bucket-on-aws' });
    expect(plain.objectStore).toMatchObject({ bucket: 'bucket-on-aws', prefix: '', region: 'us-east-1', forcePathStyle: false });
    expect(plain.objectStore!.clientOptions).toEqual({ aws_region: 'us-east-1' });
  });

  it.each([
    ['gs://bucket/lance', "the 'gs://' scheme is not served"],
    ['az://container/lance', "the 'az://' scheme is not served"],
    ['s3:/warehouse/lance', 'neither a local path nor an s3://bucket/prefix URI'],
    ['s3://UPPER/lance', 'valid bucket name'],
    ['s3://bucket/a/../b', "'.' or '..' segments"],
  ])('refuses WAREHOUSE=%s, naming the variable', (value, reason) => {
    expect(() => loadConfig({ WAREHOUSE: value })).toThrow(ConfigError);
    try {
      loadConfig({ WAREHOUSE: value });
    } catch (e) {
      expect((e as Error).message).toContain('WAREHOUSE');
      expect((e as Error).message).toContain(reason);
    }
  });

  it.each([
    ['WAREHOUSE_STORAGE_OPTIONS', 'not json'],
    ['CLIENT_STORAGE_OPTIONS', '[1,2]'],
    ['CLIENT_STORAGE_OPTIONS_BY_DATABASE', '{"bad name!":{}}'],
    ['AWS_ENDPOINT_URL', 'minio:9000'],
  ])('refuses a bad %s', (name, value) => {
    expect(() => loadConfig({ WAREHOUSE: 's3://bucket/lance', [name]: value })).toThrow(name);
  });
});
