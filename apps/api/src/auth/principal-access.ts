import { Principal, levelIn } from '@app/auth';
import { AccessView, CallerAccess, DATABASE_NAME, Securable, granteeKeysOf, rankOf } from '@app/catalog';

/**
 * Grants name principals of keys and tokens, in databases a header may name; a key's only in the
 * databases it lists: an admin of another database cannot reach it there by a grant.
 */
export function judgedByGrants(principal: Principal, database: string): boolean {
  if (!(principal.via === 'api-key' || principal.via === 'jwt') || !DATABASE_NAME.test(database)) return false;
  const scope = principal.grantDatabases;
  return scope === undefined || scope.has('*') || scope.has(database);
}

/**
 * What the database's grants (as `view` holds them) make of a principal, when they may decide for
 * it and it holds some there; undefined: its credential's own level decides alone.
 */
export function accessByGrants(principal: Principal, database: string, view: AccessView, grantees = granteeKeysOf(principal.name, principal.roles)): CallerAccess | undefined {
  if (!judgedByGrants(principal, database) || !view.grants.holdsAny(grantees)) return undefined;
  return new CallerAccess(view, principal.name, grantees, rankOf(levelIn(principal, database)));
}

/** The rank a principal holds on a securable: its grants' when they decide (`access`), otherwise its credential's own on the database. */
export function principalRankOn(principal: Principal, database: string, access: CallerAccess | undefined, securable: Securable): number {
  return access ? access.rankOn(securable) : rankOf(levelIn(principal, database));
}
