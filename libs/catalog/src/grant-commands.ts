import { CatalogView } from './catalog-view';
import { invalidInput } from './errors';
import { CatalogEvent } from './events';
import { GrantFact } from './grants';
import { validateId } from './ids';

/** Names a grantee may have: those an API key's principal or a token's `sub` and roles may carry. */
const GRANTEE_NAME = /^[^\u0000-\u001f\u007f]{1,128}$/;

/** Depth a namespace or table a grant names may have (as deep as anything the catalog holds). */
export const MAX_GRANT_DEPTH = 64;

/**
 * Refuses a grant that names nobody, nothing or no level: 400 code 13 before anything is decided.
 * One being issued must name its namespace or table as every operation names one (no delimiter,
 * slash, `..` or control character in a part): a grant on a name nothing can have would reach
 * nothing, and would list as another id. One being revoked is taken as recorded.
 */
export function validateGrant(fact: GrantFact, issuing = true): GrantFact {
  const g = fact.grantee as Record<string, unknown>;
  const names = ['principal', 'role'].filter((k) => g[k] !== undefined);
  if (names.length !== 1) throw invalidInput('grantee must be {"principal": <name>} or {"role": <name>}');
  const name = g[names[0]];
  if (typeof name !== 'string' || !GRANTEE_NAME.test(name)) throw invalidInput(`grantee ${names[0]} must be 1-128 characters without control characters`);
  const s = fact.securable as Record<string, unknown>;
  const kinds = ['database', 'namespace', 'table'].filter((k) => s[k] !== undefined);
  if (kinds.length !== 1) throw invalidInput('securable must be {"database": true}, {"namespace": [...]} or {"table": [...]}');
  if (kinds[0] === 'database' && s.database !== true) throw invalidInput('securable database must be true');
  if (kinds[0] !== 'database') {
    const id = s[kinds[0]];
    if (!Array.isArray(id) || id.length === 0) throw invalidInput(`securable ${kinds[0]} must name at least one part (the database itself is {"database": true})`);
    if (id.length > MAX_GRANT_DEPTH) throw invalidInput(`securable ${kinds[0]} has more than ${MAX_GRANT_DEPTH} parts`);
    for (const part of id) if (typeof part !== 'string' || part.length === 0 || part.length > 1024) throw invalidInput(`securable ${kinds[0]} parts must be names`);
    if (issuing) validateId(id, `securable ${kinds[0]}`);
  }
  if (fact.level !== 'read' && fact.level !== 'write' && fact.level !== 'admin') throw invalidInput("level must be 'read', 'write' or 'admin'");
  return fact;
}

/** Issuing what is held, or revoking what is not, records nothing. */
export function decideGrant(view: CatalogView, fact: GrantFact, issue: boolean): CatalogEvent[] {
  if (view.grants.holds(fact) === issue) return [];
  return [{ type: issue ? 'GrantIssued' : 'GrantRevoked', data: fact }];
}
