import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DATABASE_NAME } from '@app/catalog';


const apiKeyEntry = z.object({
  principal: z.string().min(1).max(128),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'sha256 must be the 64 hex digits of the key\'s SHA-256'),
  databases: z
    .array(z.string().refine((d) => d === '*' || DATABASE_NAME.test(d), { message: "a database is '*' or 1-64 characters of [A-Za-z0-9_-]" }))
    .min(1),
  /** `none`: the key holds exactly what grants give it (and its roles). */
  level: z.enum(['none', 'read', 'write', 'admin']),
  /** Roles grants may name; a key gets what its roles are granted. */
  roles: z.array(z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'a role is 1-128 characters of [A-Za-z0-9_.:-]')).max(64).optional(),
});

export type ApiKeySetting = z.infer<typeof apiKeyEntry>;

export interface AuthSettings {
  apiKeys: ApiKeySetting[];
  jwt?: {
    secret?: string;
    publicKeyPem?: string;
    jwksUrl?: string;
    issuer: string;
    audience: string;
    algorithms: string[];
    scopePrefix: string;
    /** The claim naming the token's roles (an array, or a space-separated string); absent: none. */
    rolesClaim?: string;
  };
  /** Shared by every process of one deployment; a random one when unset (then only this process knows it). */
  serviceKey: string;
  /** Set when the operator chose to serve beyond loopback without authentication. */
  allowUnauthenticatedNetwork: boolean;
}

export interface RateLimitSettings {
  /** Requests per window per principal; 0 turns limiting off. */
  max: number;
  windowMs: number;
}

export const authEnvSchema = {
  AUTH_API_KEYS: z.string().optional(),
  AUTH_API_KEYS_FILE: z.string().optional(),
  AUTH_JWT_SECRET: z.string().min(32, 'AUTH_JWT_SECRET must be at least 32 characters').optional(),
  AUTH_JWT_PUBLIC_KEY: z.string().optional(),
  AUTH_JWT_JWKS_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || /^(https?|file):\/\/.+/.test(v), { message: 'AUTH_JWT_JWKS_URL must be an http(s):// or file:// URL' }),
  AUTH_JWT_ISSUER: z.string().optional(),
  AUTH_JWT_AUDIENCE: z.string().optional(),
  AUTH_JWT_ALGORITHMS: z.string().optional(),
  AUTH_JWT_SCOPE_PREFIX: z
    .string()
    .default('lance')
    .refine((v) => /^[A-Za-z0-9_.-]{1,32}$/.test(v), { message: 'AUTH_JWT_SCOPE_PREFIX must be 1-32 characters of [A-Za-z0-9_.-]' }),
  AUTH_JWT_ROLES_CLAIM: z
    .string()
    .optional()
    .refine((v) => v === undefined || /^[A-Za-z0-9_.:/-]{1,128}$/.test(v), { message: 'AUTH_JWT_ROLES_CLAIM must be 1-128 characters of [A-Za-z0-9_.:/-]' }),
  AUTH_SERVICE_KEY: z.string().min(32, 'AUTH_SERVICE_KEY must be at least 32 characters').optional(),
};

type AuthEnv = { [K in keyof typeof authEnvSchema]?: z.infer<(typeof authEnvSchema)[K]> };

/** Reads the auth settings; returns the problems instead of throwing so they join the others. */
export function readAuthSettings(env: AuthEnv, allowUnauthenticatedNetwork: boolean): { settings?: AuthSettings; problems: string[] } {
  const problems: string[] = [];
  let apiKeys: ApiKeySetting[] = [];
  if (env.AUTH_API_KEYS !== undefined && env.AUTH_API_KEYS_FILE !== undefined) {
    problems.push('AUTH_API_KEYS and AUTH_API_KEYS_FILE: set one of them, not both');
  } else {
    const source = env.AUTH_API_KEYS_FILE ?? 'AUTH_API_KEYS';
    let text = env.AUTH_API_KEYS;
    if (env.AUTH_API_KEYS_FILE !== undefined) {
      try {
        text = readFileSync(env.AUTH_API_KEYS_FILE, 'utf8');
      } catch (e) {
        problems.push(`AUTH_API_KEYS_FILE: cannot read ${env.AUTH_API_KEYS_FILE}: ${(e as Error).message}`);
      }
    }
    if (text !== undefined && text.trim() !== '') {
      try {
        const parsed = z.array(apiKeyEntry).safeParse(JSON.parse(text));
        if (parsed.success) apiKeys = parsed.data;
        else problems.push(...parsed.error.issues.map((i) => `${source}: [${i.path.join('.')}] ${i.message}`));
      } catch (e) {
        problems.push(`${source}: not JSON (${(e as Error).message}); expected [{"principal","sha256","databases","level"}]`);
      }
    }
  }

  const sources = [env.AUTH_JWT_SECRET, env.AUTH_JWT_PUBLIC_KEY, env.AUTH_JWT_JWKS_URL].filter((v) => v !== undefined);
  let jwt: AuthSettings['jwt'];
  if (sources.length > 1) problems.push('AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY and AUTH_JWT_JWKS_URL: set only one key source');
  if (sources.length === 1) {
    if (!env.AUTH_JWT_ISSUER) problems.push('AUTH_JWT_ISSUER: required when JWTs are accepted (the expected `iss`)');
    if (!env.AUTH_JWT_AUDIENCE) problems.push('AUTH_JWT_AUDIENCE: required when JWTs are accepted (the expected `aud`)');
    const algorithms = (env.AUTH_JWT_ALGORITHMS ?? (env.AUTH_JWT_SECRET !== undefined ? 'HS256' : 'RS256,ES256,PS256,EdDSA'))
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    if (env.AUTH_JWT_SECRET !== undefined && algorithms.some((a) => !/^HS(256|384|512)$/.test(a))) {
      problems.push('AUTH_JWT_ALGORITHMS: a shared secret verifies HS256, HS384 or HS512 only');
    }
    if (env.AUTH_JWT_SECRET === undefined && algorithms.some((a) => /^HS/.test(a))) {
      problems.push('AUTH_JWT_ALGORITHMS: HS* algorithms need AUTH_JWT_SECRET, not a public key');
    }
    jwt = {
      secret: env.AUTH_JWT_SECRET,
      publicKeyPem: env.AUTH_JWT_PUBLIC_KEY?.replace(/\\n/g, '\n'),
      jwksUrl: env.AUTH_JWT_JWKS_URL,
      issuer: env.AUTH_JWT_ISSUER ?? '',
      audience: env.AUTH_JWT_AUDIENCE ?? '',
      algorithms,
      scopePrefix: env.AUTH_JWT_SCOPE_PREFIX ?? 'lance',
      rolesClaim: env.AUTH_JWT_ROLES_CLAIM,
    };
  }
  if (problems.length) return { problems };
  return {
    problems,
    settings: {
      apiKeys,
      jwt,
      serviceKey: env.AUTH_SERVICE_KEY ?? randomBytes(32).toString('base64url'),
      allowUnauthenticatedNetwork,
    },
  };
}

export function authConfigured(a: AuthSettings): boolean {
  return a.apiKeys.length > 0 || a.jwt !== undefined;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
