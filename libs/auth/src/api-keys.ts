import { createHash, timingSafeEqual } from 'node:crypto';
import { AccessLevel, Principal } from './access';

export interface ApiKeyEntry {
  principal: string;
  /** Hex SHA-256 of the key: the key itself is never configured or stored. */
  sha256: string;
  /** Database names, or `*` for every database. */
  databases: readonly string[];
  level: AccessLevel;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Looks keys up by their hash; one key may carry one principal. */
export class ApiKeyRegistry {
  private readonly byHash = new Map<string, Principal>();

  constructor(entries: readonly ApiKeyEntry[]) {
    for (const e of entries) {
      const hash = e.sha256.toLowerCase();
      if (this.byHash.has(hash)) throw new Error(`API key of '${e.principal}' is configured twice`);
      this.byHash.set(hash, {
        name: e.principal,
        via: 'api-key',
        grants: new Map(e.databases.map((d) => [d, e.level] as const)),
      });
    }
  }

  get size(): number {
    return this.byHash.size;
  }

  find(key: string): Principal | undefined {
    return this.byHash.get(hashApiKey(key));
  }
}

/** Compares a presented secret with the expected one without leaking where they differ. */
export function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(presented).digest(), createHash('sha256').update(expected).digest());
}
