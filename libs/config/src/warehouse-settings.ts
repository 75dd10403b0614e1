import { resolve } from 'node:path';
import { withoutEdgeSlashes } from '@app/catalog';

export type StorageOptions = Record<string, string>;

/** How this process reaches an S3 (or S3-compatible) warehouse, and what clients are handed. */
export interface ObjectStoreSettings {
  bucket: string;
  /** The key prefix of the warehouse inside the bucket, without slashes at either end ('' for the whole bucket). */
  prefix: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Lance storage options for this process's own reads and writes (its credentials included). */
  serverOptions: StorageOptions;
  /** Lance storage options handed to every client: how to reach the store, and what the operator adds. */
  clientOptions: StorageOptions;
  /** Options added for the clients of one database, over `clientOptions`. */
  clientOptionsByDatabase: Record<string, StorageOptions>;
}

export interface WarehouseSettings {
  /** An absolute local path, or `s3://bucket/prefix`. */
  root: string;
  objectStore?: ObjectStoreSettings;
}

const KEY_ALIASES: Record<string, string[]> = {
  accessKeyId: ['aws_access_key_id', 'access_key_id'],
  secretAccessKey: ['aws_secret_access_key', 'secret_access_key'],
  sessionToken: ['aws_session_token', 'session_token', 'token', 'aws_token'],
  region: ['aws_region', 'region'],
  endpoint: ['aws_endpoint', 'endpoint', 'aws_endpoint_url', 'endpoint_url'],
  virtualHosted: ['aws_virtual_hosted_style_request', 'virtual_hosted_style_request'],
};

const pick = (options: StorageOptions, what: keyof typeof KEY_ALIASES) =>
  KEY_ALIASES[what].map((k) => options[k]).find((v) => v !== undefined && v !== '');

/** Reads a JSON object of string options; problems are pushed with the variable's name. */
export function readStorageOptions(name: string, value: string | undefined, problems: string[]): StorageOptions {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    problems.push(`${name}: must be a JSON object of Lance storage options, such as {"aws_region":"us-east-1"}`);
    return {};
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push(`${name}: must be a JSON object of Lance storage options`);
    return {};
  }
  const options: StorageOptions = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v === 'string') options[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') options[k] = String(v);
    else problems.push(`${name}: option '${k}' must be a string, number or boolean`);
  }
  return options;
}

function readOptionsByDatabase(name: string, value: string | undefined, problems: string[]): Record<string, StorageOptions> {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    problems.push(`${name}: must be a JSON object mapping a database to its storage options, such as {"sales":{"aws_access_key_id":"..."}}`);
    return {};
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push(`${name}: must be a JSON object mapping a database to its storage options`);
    return {};
  }
  const byDatabase: Record<string, StorageOptions> = {};
  for (const [database, options] of Object.entries(parsed)) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(database)) problems.push(`${name}: '${database}' is not a database name (1-64 characters of [A-Za-z0-9_-])`);
    else byDatabase[database] = readStorageOptions(`${name}.${database}`, JSON.stringify(options), problems);
  }
  return byDatabase;
}

/**
 * WAREHOUSE: a local directory (the default, `$DATA_DIR/warehouse`) or `s3://bucket/prefix`. Any
 * other scheme is refused rather than taken for a directory name.
 */
export function readWarehouseSettings(env: NodeJS.ProcessEnv, dataDir: string, problems: string[]): WarehouseSettings {
  const value = env.WAREHOUSE?.trim() || `${dataDir}/warehouse`;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1].toLowerCase();
  if (scheme === 'file') return { root: resolve(value.replace(/^file:\/\//i, '')) };
  if (scheme === undefined) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(value) && !value.startsWith('./')) {
      problems.push(`WAREHOUSE: '${value}' is neither a local path nor an s3://bucket/prefix URI`);
    }
    return { root: resolve(value) };
  }
  if (scheme !== 's3') {
    problems.push(
      `WAREHOUSE: the '${scheme}://' scheme is not served; use a local path or s3://bucket/prefix (S3 or an S3-compatible store such as MinIO)`,
    );
    return { root: value };
  }
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(value);
  if (!m) {
    problems.push(`WAREHOUSE: '${value}' is not s3://bucket/prefix with a valid bucket name (3-63 characters of [a-z0-9.-])`);
    return { root: value };
  }
  const prefix = withoutEdgeSlashes(m[2] ?? '');
  if (prefix.split('/').some((s) => s === '.' || s === '..' || s === '') && prefix !== '') {
    problems.push(`WAREHOUSE: the prefix of '${value}' must not hold empty, '.' or '..' segments`);
  }
  return { root: `s3://${m[1]}${prefix ? `/${prefix}` : ''}`, objectStore: objectStoreSettings(env, m[1], prefix, problems) };
}

function objectStoreSettings(env: NodeJS.ProcessEnv, bucket: string, prefix: string, problems: string[]): ObjectStoreSettings {
  const endpoint = env.AWS_ENDPOINT_URL_S3?.trim() || env.AWS_ENDPOINT_URL?.trim() || undefined;
  if (endpoint && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) {
    problems.push(`AWS_ENDPOINT_URL: '${endpoint}' must be an http:// or https:// base URL, such as http://127.0.0.1:9000`);
  }
  const fromEnv: StorageOptions = {};
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim();
  if (region) fromEnv.aws_region = region;
  if (endpoint) {
    fromEnv.aws_endpoint = endpoint.replace(/\/$/, '');
    // An S3-compatible store at its own address is addressed by path, and plain http must be allowed.
    fromEnv.aws_virtual_hosted_style_request = 'false';
    if (endpoint.startsWith('http://')) fromEnv.allow_http = 'true';
  }
  const reach = { ...fromEnv };
  if (env.AWS_ACCESS_KEY_ID) fromEnv.aws_access_key_id = env.AWS_ACCESS_KEY_ID;
  if (env.AWS_SECRET_ACCESS_KEY) fromEnv.aws_secret_access_key = env.AWS_SECRET_ACCESS_KEY;
  if (env.AWS_SESSION_TOKEN) fromEnv.aws_session_token = env.AWS_SESSION_TOKEN;

  const serverOptions = { ...fromEnv, ...readStorageOptions('WAREHOUSE_STORAGE_OPTIONS', env.WAREHOUSE_STORAGE_OPTIONS, problems) };
  serverOptions.aws_region ??= 'us-east-1';
  const accessKeyId = pick(serverOptions, 'accessKeyId');
  const secretAccessKey = pick(serverOptions, 'secretAccessKey');
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    problems.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or their WAREHOUSE_STORAGE_OPTIONS keys) must be given together');
  }
  const serverEndpoint = pick(serverOptions, 'endpoint');
  const clientOptions = {
    ...Object.fromEntries(Object.entries(serverOptions).filter(([k]) => ['aws_region', 'aws_endpoint', 'allow_http', 'aws_virtual_hosted_style_request'].includes(k))),
    ...reach,
    ...readStorageOptions('CLIENT_STORAGE_OPTIONS', env.CLIENT_STORAGE_OPTIONS, problems),
  };
  clientOptions.aws_region ??= serverOptions.aws_region;
  return {
    bucket,
    prefix,
    region: pick(serverOptions, 'region') ?? 'us-east-1',
    endpoint: serverEndpoint,
    forcePathStyle: pick(serverOptions, 'virtualHosted') === 'false' || (serverEndpoint !== undefined && pick(serverOptions, 'virtualHosted') !== 'true'),
    credentials:
      accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, sessionToken: pick(serverOptions, 'sessionToken') } : undefined,
    serverOptions,
    clientOptions,
    clientOptionsByDatabase: readOptionsByDatabase('CLIENT_STORAGE_OPTIONS_BY_DATABASE', env.CLIENT_STORAGE_OPTIONS_BY_DATABASE, problems),
  };
}
