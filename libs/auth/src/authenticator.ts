import { ANONYMOUS, AccessLevel, Principal, SERVICE } from './access';
import { ApiKeyRegistry, keyDigest } from './api-keys';
import { timingSafeEqual } from 'node:crypto';
import { InvalidToken, JwtVerifier } from './jwt-verifier';

/** The credentials a request carries; headers are read first, the body's `identity` after. */
export interface Credentials {
  authorization?: string;
  apiKey?: string;
  identity?: { api_key?: unknown; auth_token?: unknown };
}

/** Raised for missing or refused credentials; the HTTP layer answers 401 code 16. */
export class AuthenticationFailed extends Error {}

export interface AuthenticatorOptions {
  apiKeys: ApiKeyRegistry;
  jwt?: JwtVerifier;
  /** The shared secret of the server's own calls and of the workers. */
  serviceKey: string;
}

export class Authenticator {
  private readonly serviceDigest: Buffer;
  /**
   * Keys already recognised, by the key as presented: a request with a known key skips the hash.
   * Only keys that matched enter it, so it holds at most the configured keys and the service key,
   * and an unknown key is hashed and compared as always (a lookup compares strings only on equal
   * seeded string hashes, so it tells a caller nothing about the keys held).
   */
  private readonly recognised = new Map<string, Principal>();

  constructor(private readonly options: AuthenticatorOptions) {
    this.serviceDigest = keyDigest(options.serviceKey);
  }

  /** With no keys and no token issuer configured, there is nothing to check against. */
  get enabled(): boolean {
    return this.options.apiKeys.size > 0 || this.options.jwt !== undefined;
  }

  /** What the configured API keys of a principal carry in a database (tokens are not known ahead). */
  keysOf(principal: string, database: string): { level?: AccessLevel; roles: string[] } {
    return this.options.apiKeys.ofPrincipal(principal, database);
  }

  /** The principal each configured API key of `principal` authenticates as: what a request with one of them would be judged on. */
  keyPrincipals(principal: string): readonly Principal[] {
    return this.options.apiKeys.keysNamed(principal);
  }

  /** Whether bearer tokens are verified here (an issuer is configured). */
  get acceptsTokens(): boolean {
    return this.options.jwt !== undefined;
  }

  /** Whether a key is this deployment's service key (the server's own calls and its workers). */
  isServiceKey(key: string | undefined): boolean {
    return key !== undefined && timingSafeEqual(keyDigest(key), this.serviceDigest);
  }

  /**
   * The principal the credentials name: at once for an API key, a promise for a token (its
   * issuer's keys may have to be fetched). Throws, or rejects with, AuthenticationFailed.
   */
  authenticate(c: Credentials): Principal | Promise<Principal> {
    if (!this.enabled) return ANONYMOUS;
    const auth = c.authorization?.trim();
    if (auth) {
      const [scheme, ...rest] = auth.split(/\s+/);
      const value = rest.join(' ');
      if (/^bearer$/i.test(scheme) && value) return this.token(value);
      if (/^basic$/i.test(scheme) && value) return this.key(basicPassword(value));
      throw new AuthenticationFailed(`the Authorization header must be 'Bearer <token>' or 'Basic <credentials>'`);
    }
    if (c.apiKey) return this.key(c.apiKey);
    const identity = c.identity;
    if (identity && typeof identity.auth_token === 'string' && identity.auth_token) return this.token(identity.auth_token);
    if (identity && typeof identity.api_key === 'string' && identity.api_key) return this.key(identity.api_key);
    throw new AuthenticationFailed('credentials are required: send Authorization: Bearer <token> or x-api-key: <key>');
  }

  /** A bearer value is a JWT when one is configured and it looks like one; otherwise an API key. */
  private async token(value: string): Promise<Principal> {
    if (this.options.jwt && value.split('.').length === 3) {
      try {
        return await this.options.jwt.verify(value);
      } catch (e) {
        if (e instanceof InvalidToken) throw new AuthenticationFailed(e.message);
        throw e;
      }
    }
    return this.key(value);
  }

  private key(key: string): Principal {
    const known = this.recognised.get(key);
    if (known) return known;
    const digest = keyDigest(key);
    const principal = timingSafeEqual(digest, this.serviceDigest) ? SERVICE : this.options.apiKeys.byDigest(digest);
    if (!principal) throw new AuthenticationFailed('the API key is not known');
    this.recognised.set(key, principal);
    return principal;
  }
}

/** Basic credentials carry the API key as the password; the user name is only a label. */
function basicPassword(encoded: string): string {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? decoded : decoded.slice(colon + 1);
}
