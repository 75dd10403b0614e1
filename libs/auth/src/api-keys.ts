import { hash } from 'node:crypto';
import { AccessLevel, Principal, higher, levelIn } from './access';

export interface ApiKeyEntry {
  principal: string;
  /** Hex SHA-256 of the key: the key itself is never configured or stored. */
  sha256: string;
  /** Database names, or `*` for every database. */
  databases: readonly string[];
  /** `none`: what grants in the databases' logs give it, nothing more. */
  level: AccessLevel | 'none';
  roles?: readonly string[];
}

export function hashApiKey(key: string): string {
  return keyDigest(key).toString('hex');
}

/**
 * A presented key's SHA-256, taken once per request: it is compared with the service key's and
 * looked up among the configured keys' hashes. The one-shot hash costs about a third of a Hash
 * object's.
 */
export function keyDigest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/** Looks keys up by their hash; one key may carry one principal. */
export class ApiKeyRegistry {
  private readonly byHash = new Map<string, Principal>();
  private readonly byName = new Map<string, Principal[]>();

  constructor(entries: readonly ApiKeyEntry[]) {
    for (const e of entries) {
      const hash = e.sha256.toLowerCase();
      if (this.byHash.has(hash)) throw new Error(`API key of '${e.principal}' is configured twice`);
      const principal: Principal = {
        name: e.principal,
        via: 'api-key',
        grants: e.level === 'none' ? new Map() : new Map(e.databases.map((d) => [d, e.level as AccessLevel] as const)),
        roles: [...new Set(e.roles ?? [])],
        grantDatabases: new Set(e.databases),
      };
      this.byHash.set(hash, principal);
      this.byName.set(e.principal, [...(this.byName.get(e.principal) ?? []), principal]);
    }
  }

  /** What each configured key of `principal` makes of its caller (one principal may have several keys). */
  keysNamed(principal: string): readonly Principal[] {
    return this.byName.get(principal) ?? [];
  }

  /** The highest level any configured key of `principal` carries in `database` (directly or through `*`), and their roles. */
  ofPrincipal(principal: string, database: string): { level?: AccessLevel; roles: string[] } {
    let level: AccessLevel | undefined;
    const roles = new Set<string>();
    for (const p of this.keysNamed(principal)) {
      const own = levelIn(p, database);
      if (own !== undefined) level = higher(level, own);
      for (const r of p.roles) roles.add(r);
    }
    return { level, roles: [...roles] };
  }

  get size(): number {
    return this.byHash.size;
  }

  find(key: string): Principal | undefined {
    return this.byDigest(keyDigest(key));
  }

  byDigest(digest: Buffer): Principal | undefined {
    return this.byHash.get(digest.toString('hex'));
  }
}
