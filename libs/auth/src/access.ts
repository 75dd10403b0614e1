/** What a principal may do in a database: read < write < admin. */
export type AccessLevel = 'read' | 'write' | 'admin';

export const ACCESS_LEVELS: readonly AccessLevel[] = ['read', 'write', 'admin'];

/** The database name that stands for every database in a grant. */
export const ALL_DATABASES = '*';

const RANK: Record<AccessLevel, number> = { read: 1, write: 2, admin: 3 };

export function atLeast(held: AccessLevel | undefined, needed: AccessLevel): boolean {
  return held !== undefined && RANK[held] >= RANK[needed];
}

export function higher(a: AccessLevel | undefined, b: AccessLevel): AccessLevel {
  return a !== undefined && RANK[a] >= RANK[b] ? a : b;
}

/** Database name (or `*`) to the highest level granted there. */
export type Grants = ReadonlyMap<string, AccessLevel>;

export interface Principal {
  /** Who it is: a JWT's `sub`, an API key's configured principal, or a fixed name. */
  readonly name: string;
  readonly via: 'jwt' | 'api-key' | 'service' | 'anonymous';
  /** Database-wide levels its credential carries (`none` in a key: an empty map). */
  readonly grants: Grants;
  /** The roles grants in a database's log may name for it (a key's `roles`, a token's roles claim). */
  readonly roles: readonly string[];
  /**
   * The databases whose grants may judge it (a key's `databases`, `*` among them for every one);
   * absent: every database (a token's).
   */
  readonly grantDatabases?: ReadonlySet<string>;
}

/** Whether the principal holds `level` in `database`, through that database or through `*`. */
export function allows(principal: Principal, database: string, level: AccessLevel): boolean {
  return atLeast(principal.grants.get(database), level) || atLeast(principal.grants.get(ALL_DATABASES), level);
}

/** The highest level the principal holds in `database`, through that database or through `*`. */
export function levelIn(principal: Principal, database: string): AccessLevel | undefined {
  const own = principal.grants.get(database);
  const everywhere = principal.grants.get(ALL_DATABASES);
  return own === undefined ? everywhere : higher(everywhere, own);
}

const EVERYTHING: Grants = new Map([[ALL_DATABASES, 'admin']]);

/** Without configured authentication (loopback only) every caller may do everything. */
export const ANONYMOUS: Principal = { name: 'anonymous', via: 'anonymous', grants: EVERYTHING, roles: [] };

/** The server's own calls back into itself and the workers' calls to the API. */
export const SERVICE: Principal = { name: 'catalog-service', via: 'service', grants: EVERYTHING, roles: [] };
