import { ObjectId, TableRef, branchOf, requireTableId } from '@app/catalog';
import { readArrowBody } from '@app/lance';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { parseBody } from '../http/body-schemas';
import { inputLimits } from '../http/input-limits';
import { RestRequest } from '../http/rest-request';
import { BranchSource, Operation } from './operation';

/** What an operation's requests are read by, worked out once from its entry. */
export interface RequestParser {
  readonly entry: Operation;
  readonly schema?: z.ZodType;
  /** The path segment that holds the id (`/v1/table/:id/...`: 3). */
  readonly idSegment: number;
  readonly branch?: (body: Record<string, unknown>, http: RestRequest) => string | null | undefined;
}

export function requestParser(entry: Operation): RequestParser {
  const segments = entry.path.split('/');
  const idSegment = segments.findIndex((s) => s.startsWith(':'));
  if (entry.subject !== 'none' && idSegment === -1) throw new Error(`${entry.method} ${entry.path}: a ${entry.subject} operation needs an id in its path`);
  return {
    entry,
    schema: typeof entry.body === 'object' ? entry.body : undefined,
    idSegment,
    branch: entry.branch === undefined ? undefined : branchReader(entry.branch as BranchSource<Record<string, unknown>>),
  };
}

/**
 * A request in the protocol's terms, read in one order for every operation: the body against its
 * schema, the context (body and headers), the path's id (checked against the body's, which may
 * repeat it) with the branch, then an Arrow stream body. Any of them failing answers 400 code 13
 * before the handler runs.
 */
export function parseRequest(parser: RequestParser, request: FastifyRequest, defaultDatabase: string): Record<string, unknown> {
  const { entry, schema, idSegment } = parser;
  const http = new RestRequest(request, defaultDatabase);
  const body = schema ? (parseBody(schema, http.body()) as Record<string, unknown>) : {};
  const parsed: Record<string, unknown> = { body, ctx: http.context(schema ? body.context : undefined), http, raw: request };
  switch (entry.subject) {
    case 'table': {
      const id = requireTableId(pathId(http, idSegment, schema ? body : undefined));
      const branch = parser.branch ? branchOf(parser.branch(body, http)) : undefined;
      parsed.table = (branch === undefined ? { id } : { id, branch }) satisfies TableRef;
      break;
    }
    case 'namespace':
      parsed.namespace = pathId(http, idSegment, schema ? body : undefined);
      break;
    case 'transaction':
      parsed.transactionId = http.transactionId(idSegment, schema ? body : undefined);
      break;
  }
  if (entry.body === 'arrow-stream') parsed.body = readArrowBody(request.body, inputLimits().arrow);
  return parsed;
}

/** A JSON body may repeat the path's id, and must then agree with it. */
function pathId(http: RestRequest, segment: number, body: { id?: unknown } | undefined): ObjectId {
  return body ? http.objectId(segment, body) : http.pathId(segment);
}

function branchReader(source: BranchSource<Record<string, unknown>>): (body: Record<string, unknown>, http: RestRequest) => string | null | undefined {
  switch (source) {
    case 'body':
      return (body) => body.branch as string | null | undefined;
    case 'query':
      return (_body, http) => http.queryString('branch');
    case 'query, then body':
      return (body, http) => http.queryString('branch') ?? (body.branch as string | null | undefined);
    case 'body, then query':
      return (body, http) => (body.branch as string | null | undefined) ?? http.queryString('branch');
    default:
      return (body) => source(body);
  }
}
