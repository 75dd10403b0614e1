import { ACCESS_LEVELS, ALL_DATABASES, AccessLevel, Grants, higher } from './access';

/**
 * Reads OAuth2 scopes of the form `<prefix>:<level>` (every database) and
 * `<prefix>:<level>:<database>`, e.g. `lance:read`, `lance:write:sales`. Other scopes are ignored.
 */
export function grantsFromScopes(scopes: readonly string[], prefix: string): Grants {
  const grants = new Map<string, AccessLevel>();
  for (const scope of scopes) {
    const parts = scope.split(':');
    if (parts[0] !== prefix || parts.length < 2 || parts.length > 3) continue;
    const level = parts[1] as AccessLevel;
    if (!ACCESS_LEVELS.includes(level)) continue;
    const database = parts[2] ?? ALL_DATABASES;
    if (database === '') continue;
    grants.set(database, higher(grants.get(database), level));
  }
  return grants;
}

/** The scopes of a token: the space-separated `scope` claim (RFC 8693) or an `scp` array. */
export function scopesOf(claims: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (typeof claims.scope === 'string') out.push(...claims.scope.split(' ').filter(Boolean));
  if (Array.isArray(claims.scp)) out.push(...claims.scp.filter((s): s is string => typeof s === 'string'));
  else if (typeof claims.scp === 'string') out.push(...claims.scp.split(' ').filter(Boolean));
  return out;
}
