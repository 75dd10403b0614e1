import { AccessLevel, allows } from '@app/auth';
import { CatalogError, ErrorCode, ObjectId, parentOf, rankOf } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { Entry, Operation, RawOperation, RouteAccess, isMount, nameOf } from './operation';

const VERB = { read: 'read', write: 'write', admin: 'administer' } as const;

/**
 * The batch routes need write access as a whole; each operation in the body needs its own
 * entry's level too (403 code 15 for the whole batch, before anything is decided). Checked
 * against the grant the authorization hook found for the request's database.
 */
export function requireBatchAccess(
  request: FastifyRequest,
  database: string,
  operations: ReadonlyArray<{ kind: string; level: RouteAccess; table: ObjectId; makes?: boolean }>,
): void {
  const principal = request.principal;
  const grants = request.callerAccess;
  operations.forEach(({ kind, level: access, table, makes }, i) => {
    const level = databaseLevel(kind, access);
    if (principal && allows(principal, database, level)) return;
    // Judged by grants: each operation on its own table (a declaration: on its namespace), a
    // table the caller may not read answering as a missing one would.
    if (grants) {
      if (makes) grants.requireNamespace(parentOf(table), rankOf(level));
      else grants.requireTable(table, rankOf(level));
      return;
    }
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

/** What a data change records as its transaction's operation (`<change>Table`): write-level work. */
const DATA_CHANGES = /^(Insert|Overwrite|Create|MergeInsert|Update|Delete|AddColumns|AlterColumns|DropColumns|UpdateFieldMetadata|UpdateSchemaMetadata|Restore)Table$/;

/**
 * The database level the operation a transaction records needs: its entry's (by operationId or
 * extension name), write for a data change, admin for anything else (such as the server's own).
 */
export function levelOfOperation(entries: readonly Entry[], operation: string | undefined): AccessLevel {
  const entry = entries.find((e) => !isMount(e) && nameOf(e) === operation) as Operation | RawOperation | undefined;
  const access = entry?.access;
  if (access === 'read' || access === 'write' || access === 'admin') return access;
  return operation !== undefined && DATA_CHANGES.test(operation) ? 'write' : 'admin';
}

/** 403 code 15 unless the request's principal holds `level` on the database, saying what it wanted to do. */
export function requireOperationLevel(request: FastifyRequest, database: string, level: AccessLevel, what: string): void {
  const principal = request.principal;
  if (principal && allows(principal, database, level)) return;
  // Judged by grants: the level the caller holds on what the transaction touched (grant-gate.ts).
  if (request.callerAccess && rankOf(request.subjectLevel) >= rankOf(level)) return;
  throw new CatalogError(ErrorCode.PermissionDenied, `${principal?.name ?? 'an unauthenticated caller'} may not ${what}: that needs ${level} on database '${database}'`);
}
