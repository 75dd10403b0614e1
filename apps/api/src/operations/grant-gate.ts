import { CallerAccess, CatalogError, ErrorCode, EventMetadata, ObjectId, RANK_LEVELS, Securable, parentOf, rankOf } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { RestRequest } from '../http/rest-request';
import { principalRankOn } from '../auth/principal-access';
import { MAKES_SUBJECT } from './check-order';
import { Operation, OperationServices, RawOperation, Subject, nameOf } from './operation';

/** Namespace operations that only need the caller to see the namespace: they answer what it may see of it. */
const TRAVERSE = new Set(['ListNamespaces', 'ListTables', 'NamespaceExists', 'NamespaceHistory']);
/** Operations without a subject in their path that answer only what the caller may read, or judge each item themselves. */
const JUDGED_INSIDE = new Set(['ListAllTables', 'EnterpriseListTables', 'DatabaseHistory', 'BatchCreateTableVersions', 'BatchCommitTables', 'CreateGrant', 'RevokeGrant', 'ListGrants', 'CheckGrant']);

type Level = 'read' | 'write' | 'admin';

/**
 * Judges a request whose caller's grants decide it (the auth hook set `callerAccess`) on the
 * subject its path names, before its body is read: 404 for what the caller may not read, in the
 * words of a missing one; 403 for what it sees but may not do. Sets the caller's level on the
 * subject, which the credentials vended for a table and the right to set policies follow.
 * A transaction's subject is what its events touched, read from the log (a promise then).
 */
export function judgeByGrants(entry: Operation | (RawOperation & { subject: Subject }), idSegment: number, request: FastifyRequest, services: OperationServices): void | Promise<void> {
  const access = request.callerAccess!;
  const needed = rankOf(entry.access);
  const name = nameOf(entry);
  const http = (): RestRequest => new RestRequest(request, services.config.defaultDatabase);
  let rank: number;
  switch (entry.subject) {
    case 'table': {
      const id = http().pathId(idSegment);
      if (MAKES_SUBJECT.has(name)) {
        access.requireNamespace(parentOf(id), needed);
        rank = access.rankOn({ table: id });
      } else rank = access.requireTable(id, needed);
      break;
    }
    case 'namespace': {
      const id = http().pathId(idSegment);
      if (MAKES_SUBJECT.has(name)) {
        if (!access.seesNamespace(parentOf(id))) throw access.hiddenNamespace(parentOf(id));
        rank = access.rankOn({ namespace: id });
        if (rank < needed) throw access.refusal(needed, { namespace: id });
      } else rank = access.requireNamespace(id, needed, TRAVERSE.has(name));
      break;
    }
    case 'transaction':
      return transactionLevel(access, http().transactionId(idSegment, {}), request, services).then((r) => {
        if (r < needed) throw access.refusal(needed, { database: true });
        setLevel(request, r);
      });
    default:
      if (JUDGED_INSIDE.has(name)) return;
      rank = access.rankOn({ database: true });
      if (rank < needed) throw access.refusal(needed, { database: true });
  }
  setLevel(request, rank);
}

function setLevel(request: FastifyRequest, rank: number): void {
  if (rank > 0) request.subjectLevel = RANK_LEVELS[rank] as Level;
}

/**
 * The caller's level on a transaction: the lowest on what its events touched (tables, namespaces,
 * grants' securables). One it may not read, or one without such events, answers as a missing one.
 * Reads the database's log for the transaction's events: only callers whose grants decide pay it.
 */
async function transactionLevel(access: CallerAccess, transactionId: string, request: FastifyRequest, services: OperationServices): Promise<number> {
  const http = new RestRequest(request, services.config.defaultDatabase);
  const missing = new CatalogError(ErrorCode.TransactionNotFound, `transaction '${transactionId}' does not exist`);
  const history = await services.history.transactionHistory({ database: http.database(), context: {}, delimiter: http.delimiter }, transactionId, {}).catch((e) => {
    if (e instanceof CatalogError && e.code === ErrorCode.TransactionNotFound) throw missing;
    throw e;
  });
  let lowest = 3;
  let subjects = 0;
  for (const e of history.events) {
    if ((e as { type: string }).type === 'TransactionAltered' || (e.transaction_id as EventMetadata['transactionId']) !== transactionId) continue;
    for (const s of subjectsOf(e.data)) {
      subjects++;
      lowest = Math.min(lowest, access.rankOn(s));
    }
  }
  if (subjects === 0 || lowest === 0) throw missing;
  return lowest;
}

function subjectsOf(data: unknown): Securable[] {
  const d = data as { table?: ObjectId; newTable?: ObjectId; namespace?: ObjectId; securable?: Securable };
  const out: Securable[] = [];
  if (d.securable) out.push(d.securable);
  if (d.table) out.push({ table: d.table });
  if (d.newTable) out.push({ table: d.newTable });
  if (d.namespace) out.push({ namespace: d.namespace });
  return out;
}

/** The rank a caller holds on a securable: its grants' when they decide, otherwise its credential's on the database. */
export function rankOnSecurable(request: FastifyRequest, database: string, securable: Securable): number {
  return request.principal ? principalRankOn(request.principal, database, request.callerAccess, securable) : 0;
}

/** Refuses (403 code 15) a caller without admin on the securable: `what` says what it may then not do. */
export function requireAdminOn(request: FastifyRequest, database: string, securable: Securable, what: string): void {
  if (rankOnSecurable(request, database, securable) >= rankOf('admin')) return;
  throw new CatalogError(ErrorCode.PermissionDenied, `${request.principal?.name ?? 'this caller'} may not ${what}`);
}
