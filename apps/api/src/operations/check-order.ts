import { CatalogError, ErrorCode, ObjectId, parentOf, requireNamespace, requireTable, requireVersion } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { RestRequest } from '../http/rest-request';
import { Operation, OperationServices, nameOf } from './operation';

/** Operations that make their subject: only what it would live in must exist first. */
export const MAKES_SUBJECT = new Set(['CreateNamespace', 'CreateTable', 'DeclareTable', 'RegisterTable', 'CreateMaterializedView', 'EnterpriseCreateTable']);
/** Operations whose body's `version` is one they make, not one that must exist. */
const MAKES_VERSION = new Set(['CreateTableVersion']);

/** What a request's body, or a feature it asks for, is refused with: judged only once its subject exists. */
const ABOUT_THE_BODY = new Set<number>([ErrorCode.InvalidInput, ErrorCode.Unsupported, ErrorCode.TableSchemaValidationError]);

/**
 * A refusal that stands whatever the catalog holds: the operation itself can never do what is
 * asked (a vector index type on the scalar-index route), so no lookup comes first.
 */
export function refusedWhateverTheState(error: CatalogError): CatalogError {
  return Object.assign(error, { standsBeforeLookup: true });
}

/**
 * One order of checks for every operation: the credential and its database (the auth hooks: 401,
 * 403), then the namespace, table or transaction the path names (404), then the body (400, and
 * 406 for a feature not served), then the state (409). Bodies are read before the handler looks
 * its subject up, so a refusal of the body is held back until the subject is known to exist: a
 * missing one answers 404 instead, as the Lance conformance contracts ask (a managed table's
 * version the body names included).
 */
export async function inOrder(error: unknown, entry: Operation, idSegment: number, request: FastifyRequest, services: OperationServices): Promise<never> {
  if (!(error instanceof CatalogError) || !ABOUT_THE_BODY.has(error.code) || (error as { standsBeforeLookup?: boolean }).standsBeforeLookup) throw error;
  const missing = await missingSubject(entry, idSegment, request, services).catch(() => undefined);
  throw missing ?? error;
}

/** The NotFound error of the request's subject, or undefined when it exists (or cannot be told). */
async function missingSubject(entry: Operation, idSegment: number, request: FastifyRequest, services: OperationServices): Promise<CatalogError | undefined> {
  if (entry.subject === 'none' || idSegment < 0) return undefined;
  const http = new RestRequest(request, services.config.defaultDatabase);
  const database = http.database();
  const makes = MAKES_SUBJECT.has(nameOf(entry));
  const found = (check: () => unknown): CatalogError | undefined => {
    try {
      check();
      return undefined;
    } catch (e) {
      if (e instanceof CatalogError && e.code !== ErrorCode.InvalidInput) return e;
      return undefined;
    }
  };
  if (entry.subject === 'transaction') {
    let id: string;
    try {
      id = http.transactionId(idSegment, {});
    } catch (e) {
      return e instanceof CatalogError && e.code === ErrorCode.TransactionNotFound ? e : undefined;
    }
    return services.transactions
      .describeTransaction({ database, context: {}, delimiter: http.delimiter }, id)
      .then(() => undefined, (e) => (e instanceof CatalogError && e.code === ErrorCode.TransactionNotFound ? e : undefined));
  }
  const id: ObjectId = http.pathId(idSegment);
  const view = (await services.projections.current(database)).state;
  if (entry.subject === 'namespace') return found(() => requireNamespace(view, makes ? parentOf(id) : id));
  if (makes) return found(() => requireNamespace(view, parentOf(id)));
  return found(() => {
    const table = requireTable(view, id);
    // The version a body names is part of what it names: a managed table's missing version is 404 too.
    const version = (request.body as { version?: unknown } | undefined)?.version;
    if (!MAKES_VERSION.has(nameOf(entry)) && table.managedVersioning && Number.isSafeInteger(version) && (version as number) >= 0 && (request.body as { branch?: unknown }).branch == null) {
      requireVersion(table, version as number);
    }
  });
}
