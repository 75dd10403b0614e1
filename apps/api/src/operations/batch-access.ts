import { AccessLevel, allows } from '@app/auth';
import { CatalogError, ErrorCode } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { RouteAccess } from './operation';

const VERB = { read: 'read', write: 'write', admin: 'administer' } as const;

/**
 * The batch routes need write access as a whole; each operation in the body needs its own
 * entry's level too (403 code 15 for the whole batch, before anything is decided). Checked
 * against the grant the authorization hook found for the request's database.
 */
export function requireBatchAccess(request: FastifyRequest, database: string, operations: ReadonlyArray<{ kind: string; level: RouteAccess }>): void {
  const principal = request.principal;
  operations.forEach(({ kind, level: access }, i) => {
    const level = databaseLevel(kind, access);
    if (principal && allows(principal, database, level)) return;
    throw new CatalogError(
      ErrorCode.PermissionDenied,
      `${principal?.name ?? 'an unauthenticated caller'} may not ${VERB[level]} database '${database}', which operations[${i}] (${kind}) needs`,
    );
  });
}

function databaseLevel(kind: string, access: RouteAccess): AccessLevel {
  if (access !== 'read' && access !== 'write' && access !== 'admin') throw new Error(`batch operation ${kind} has no database level`);
  return access;
}
