import { allows } from '@app/auth';
import { CatalogError, ErrorCode } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { BatchOperationKind, batchOperationLevel } from './access-policy';

const VERB = { read: 'read', write: 'write', admin: 'administer' } as const;

/**
 * The batch routes need write access as a whole; each operation in the body needs its own
 * route's level too (403 code 15 for the whole batch, before anything is decided). Checked
 * against the grant the authorization hook found for the request's database.
 */
export function requireBatchAccess(request: FastifyRequest, database: string, kinds: readonly BatchOperationKind[]): void {
  const principal = request.principal;
  kinds.forEach((kind, i) => {
    const level = batchOperationLevel(kind);
    if (principal && allows(principal, database, level)) return;
    throw new CatalogError(
      ErrorCode.PermissionDenied,
      `${principal?.name ?? 'an unauthenticated caller'} may not ${VERB[level]} database '${database}', which operations[${i}] (${kind}) needs`,
    );
  });
}
