import type { ObjectStoreSettings } from './warehouse-settings';
import { DATABASE_NAME } from '@app/catalog';

/** What clients are handed: the operator's options as they are, or STS sessions scoped to one table. */
export type ClientCredentials = StaticClientCredentials | StsClientCredentials;

export interface StaticClientCredentials {
  mode: 'static';
}

export interface StsClientCredentials {
  mode: 'sts';
  /** The role assumed for every database without a role of its own. */
  roleArn: string;
  roleArnByDatabase: Record<string, string>;
  /** The STS endpoint; absent: the SDK's own for the region (AWS). */
  endpoint?: string;
  region: string;
  /** The catalog's own credentials, which assume the roles; absent: the SDK's default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** How long a vended session lives (STS DurationSeconds). */
  durationSeconds: number;
  /** How often the catalog checks that a vended session cannot obtain another (STS_CHAINING_CHECK_SECONDS). */
  chainingCheckSeconds: number;
}

const ROLE_ARN = /^arn:[a-z0-9-]+:iam::[A-Za-z0-9_-]*:role\/[\w+=,.@\/-]{1,512}$/;
/** Option names Lance reads as credentials: under STS the catalog vends them itself. */
const CREDENTIAL_KEYS = /(access_key_id|secret_access_key|session_token|^token$|_token$|expires_at_millis)/;

/**
 * CLIENT_CREDENTIALS (`static`, the default, or `sts`) with STS_ROLE_ARN, STS_ROLE_ARN_BY_DATABASE,
 * AWS_ENDPOINT_URL_STS (else AWS_ENDPOINT_URL) and VENDED_CREDENTIALS_SECONDS. STS needs an S3
 * warehouse; Google Cloud Storage (downscoped tokens) and Azure (SAS) are not served.
 */
export function readClientCredentials(env: NodeJS.ProcessEnv, objectStore: ObjectStoreSettings | undefined, problems: string[]): ClientCredentials {
  const mode = env.CLIENT_CREDENTIALS?.trim().toLowerCase() || 'static';
  const seconds = readSeconds('VENDED_CREDENTIALS_SECONDS', env.VENDED_CREDENTIALS_SECONDS, 3600, 43_200, problems);
  if (mode === 'static') return { mode: 'static' };
  if (mode !== 'sts') {
    problems.push(
      `CLIENT_CREDENTIALS: '${env.CLIENT_CREDENTIALS}' is not served; use 'static' (the options an operator gives) or 'sts' (AssumeRole per table). ` +
        'Google Cloud Storage downscoped tokens and Azure SAS are not built.',
    );
    return { mode: 'static' };
  }
  if (!objectStore) {
    problems.push('CLIENT_CREDENTIALS: sts vends credentials for an S3 warehouse; set WAREHOUSE=s3://bucket/prefix');
    return { mode: 'static' };
  }
  const roleArn = env.STS_ROLE_ARN?.trim() ?? '';
  if (!ROLE_ARN.test(roleArn)) {
    problems.push(`STS_ROLE_ARN: ${roleArn ? `'${roleArn}' is not` : 'CLIENT_CREDENTIALS=sts needs'} a role ARN, such as arn:aws:iam::123456789012:role/lance-tables`);
  }
  const endpoint = env.AWS_ENDPOINT_URL_STS?.trim() || env.AWS_ENDPOINT_URL?.trim() || undefined;
  if (endpoint && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) {
    problems.push(`AWS_ENDPOINT_URL_STS: '${endpoint}' must be an http:// or https:// base URL, such as https://sts.eu-west-1.amazonaws.com`);
  }
  for (const [name, options] of [['CLIENT_STORAGE_OPTIONS', objectStore.clientOptions], ...Object.entries(objectStore.clientOptionsByDatabase).map(([db, o]) => [`CLIENT_STORAGE_OPTIONS_BY_DATABASE.${db}`, o])] as const) {
    const held = Object.keys(options).filter((k) => CREDENTIAL_KEYS.test(k));
    if (held.length) problems.push(`${name}: holds ${held.join(', ')}; with CLIENT_CREDENTIALS=sts the catalog vends credentials itself`);
  }
  return {
    mode: 'sts',
    roleArn,
    roleArnByDatabase: readRoleArns(env.STS_ROLE_ARN_BY_DATABASE, problems),
    endpoint: endpoint?.replace(/\/$/, ''),
    region: objectStore.region,
    credentials: objectStore.credentials,
    durationSeconds: seconds,
    chainingCheckSeconds: readSeconds('STS_CHAINING_CHECK_SECONDS', env.STS_CHAINING_CHECK_SECONDS, 300, 86_400, problems),
  };
}

/** A whole number of seconds from 1 to `max`, `fallback` when unset (or, with a problem said, when wrong). */
function readSeconds(name: string, value: string | undefined, fallback: number, max: number, problems: string[]): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    problems.push(`${name}: must be an integer from 1 to ${max}, got '${value}'`);
    return fallback;
  }
  return n;
}

function readRoleArns(value: string | undefined, problems: string[]): Record<string, string> {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.push('STS_ROLE_ARN_BY_DATABASE: must be a JSON object mapping a database to a role ARN, such as {"sales":"arn:aws:iam::123456789012:role/sales-tables"}');
    return {};
  }
  const arns: Record<string, string> = {};
  for (const [database, arn] of Object.entries(parsed)) {
    if (!DATABASE_NAME.test(database)) problems.push(`STS_ROLE_ARN_BY_DATABASE: '${database}' is not a database name (1-64 characters of [A-Za-z0-9_-])`);
    else if (typeof arn !== 'string' || !ROLE_ARN.test(arn)) problems.push(`STS_ROLE_ARN_BY_DATABASE.${database}: '${String(arn)}' is not a role ARN`);
    else arns[database] = arn;
  }
  return arns;
}
