import { JWTVerifyGetKey, createLocalJWKSet, createRemoteJWKSet, errors, importSPKI, jwtVerify } from 'jose';
import type { JWK } from 'jose';
import { Principal } from './access';
import { grantsFromScopes, scopesOf } from './scopes';

export interface JwtSettings {
  /** Exactly one key source: an HS256 shared secret, a PEM public key, or a JWKS URL. */
  secret?: string;
  publicKeyPem?: string;
  jwksUrl?: string;
  issuer: string;
  audience: string;
  algorithms: string[];
  scopePrefix: string;
  /** The claim naming the token's roles; absent: a token has none. */
  rolesClaim?: string;
}

/** Why a token was refused, in words a caller can act on. */
export class InvalidToken extends Error {}

type Key = Uint8Array | Awaited<ReturnType<typeof importSPKI>> | JWTVerifyGetKey;

/** Verifies OAuth2 access tokens (signature, exp, nbf, iss, aud) and reads their scopes as grants. */
export class JwtVerifier {
  private key?: Promise<Key>;

  constructor(private readonly settings: JwtSettings) {}

  async verify(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, (await this.resolveKey()) as JWTVerifyGetKey, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: this.settings.algorithms,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      });
      return {
        name: payload.sub!,
        via: 'jwt',
        grants: grantsFromScopes(scopesOf(payload), this.settings.scopePrefix),
        roles: this.settings.rolesClaim ? rolesOf(payload[this.settings.rolesClaim]) : [],
      };
    } catch (e) {
      throw new InvalidToken(describe(e));
    }
  }

  private resolveKey(): Promise<Key> {
    this.key ??= this.loadKey();
    return this.key;
  }

  private async loadKey(): Promise<Key> {
    const s = this.settings;
    if (s.secret !== undefined) return new TextEncoder().encode(s.secret);
    if (s.publicKeyPem !== undefined) return importSPKI(s.publicKeyPem, s.algorithms[0]);
    if (s.jwksUrl !== undefined) {
      // A file URL is read once (tests and air-gapped set-ups); an http(s) one is fetched and cached by jose.
      if (s.jwksUrl.startsWith('file:')) {
        const { readFile } = await import('node:fs/promises');
        return createLocalJWKSet(JSON.parse(await readFile(new URL(s.jwksUrl), 'utf8')) as { keys: JWK[] });
      }
      return createRemoteJWKSet(new URL(s.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 });
    }
    throw new Error('no JWT key source is configured');
  }
}

/** A roles claim: an array of names or one space-separated string; anything else names none. */
function rolesOf(claim: unknown): string[] {
  const names = Array.isArray(claim) ? claim : typeof claim === 'string' ? claim.split(' ') : [];
  return [...new Set(names.filter((r): r is string => typeof r === 'string' && r !== '' && r.length <= 128))].slice(0, 64);
}

function describe(e: unknown): string {
  if (e instanceof errors.JWTExpired) return 'the token has expired';
  if (e instanceof errors.JWTClaimValidationFailed) return `the token's '${e.claim}' claim is not accepted (${e.reason})`;
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (e instanceof errors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm that is not accepted';
  if (e instanceof errors.JWKSNoMatchingKey) return 'no key of the JWKS matches the token';
  if (e instanceof errors.JWKSTimeout) return 'the JWKS could not be fetched in time';
  if (e instanceof errors.JOSEError) return `the token is not valid: ${e.message}`;
  return `the token could not be verified: ${e instanceof Error ? e.message : String(e)}`;
}
