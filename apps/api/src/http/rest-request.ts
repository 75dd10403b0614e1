import {
  CatalogError,
  DATABASE_NAME,
  DEFAULT_DELIMITER,
  ErrorCode,
  ObjectId,
  PageRequest,
  Properties,
  checkKey,
  invalidInput,
  propertyMapProblem,
  sameId,
  validateId,
  validateName,
} from '@app/catalog';
import { RequestContext } from '@app/application';
import { levelIn } from '@app/auth';
import type { FastifyRequest } from 'fastify';
import { CONTEXT_LIMIT_NAMES, checkedParse, contextLimits, contextMap, idArray } from './body-schemas';
import { decodeFormComponent } from './form-decode';

const CTX_PREFIX = 'x-lance-ctx-';

/**
 * One REST-binding request: decodes the path id, the query and the headers the way the Lance
 * clients encode them, for the operations of the HTTP edge.
 */
export class RestRequest {
  readonly delimiter: string;
  private readonly query: Record<string, unknown>;

  constructor(
    private readonly req: FastifyRequest,
    private readonly defaultDatabase: string,
  ) {
    this.query = (req.query ?? {}) as Record<string, unknown>;
    const delimiter = this.queryString('delimiter');
    if (delimiter !== undefined && (delimiter.length === 0 || delimiter.length > 8 || /[\u0000-\u001f]/.test(delimiter))) {
      throw invalidInput(`delimiter '${delimiter}' is not usable: it must be 1 to 8 printable characters`);
    }
    this.delimiter = delimiter ?? DEFAULT_DELIMITER;
  }

  /** The raw (still encoded) path segment at `index`, decoded into an object id. */
  pathId(index: number): string[] {
    const raw = pathSegment(this.req.raw.url ?? '', index);
    if (raw === undefined) throw invalidInput('the request path has no object id');
    const decoded = decodeFormComponent(raw);
    if (decoded === this.delimiter) return [];
    return validateId(decoded.split(this.delimiter), 'id', this.delimiter);
  }

  /** The raw path segment at `index` (a name, such as an index's), decoded as clients encode it. */
  pathText(index: number): string {
    return decodeFormComponent(pathSegment(this.req.raw.url ?? '', index) ?? '');
  }

  /** The body as an object; a missing body or JSON `null` reads as {}. */
  body(): Record<string, unknown> {
    const body = this.req.body;
    if (body === undefined || body === null || body === '') return {};
    if (Buffer.isBuffer(body)) throw invalidInput('this operation takes a JSON body (application/json), not an Arrow stream');
    if (typeof body !== 'object' || Array.isArray(body)) throw invalidInput('the request body must be a JSON object');
    return body as Record<string, unknown>;
  }

  /** The path id, checked against the body's `id` when the body repeats it. */
  objectId(index: number, body: { id?: unknown } = this.body()): string[] {
    const id = this.pathId(index);
    if (body.id !== undefined && body.id !== null) {
      const parsed = checkedParse(idArray, body.id);
      if (!parsed.success) throw invalidInput('id must be an array of strings');
      if (!sameId(parsed.data, id)) {
        throw invalidInput(
          `the body id ${JSON.stringify(parsed.data)} does not match the path id ${JSON.stringify(id)}`,
          'Send the same id in the path and the body, or leave it out of the body.',
        );
      }
    }
    return id;
  }

  /** The body's `context` with the `x-lance-ctx-*` headers over it, bounded together by CONTEXT_MAX_BYTES. */
  context(bodyContext?: unknown): RequestContext {
    const context: Properties = {};
    let headers = false;
    if (bodyContext !== undefined && bodyContext !== null) {
      const parsed = checkedParse(contextMap, bodyContext);
      if (!parsed.success) throw invalidInput(`context: ${parsed.error.issues[0]?.message ?? 'must be an object of string values'}`);
      Object.assign(context, parsed.data);
    }
    const all = this.req.headers;
    for (const name in all) {
      const value = all[name];
      if (name.startsWith(CTX_PREFIX) && typeof value === 'string') {
        context[checkKey(name.slice(CTX_PREFIX.length), `header '${name}'`)] = value;
        headers = true;
      }
    }
    if (headers) {
      const problem = propertyMapProblem(context, contextLimits(), CONTEXT_LIMIT_NAMES);
      if (problem) throw invalidInput(`context (the body's with the x-lance-ctx-* headers): ${problem}`);
    }
    this.checkMinTimestamp();
    const principal = this.req.principal;
    const database = this.database();
    const ctx: RequestContext = { database, context, delimiter: this.delimiter };
    if (principal && principal.via !== 'anonymous') ctx.principal = principal.name;
    if (principal?.via === 'service') ctx.service = true;
    if (principal) ctx.level = this.req.subjectLevel ?? levelIn(principal, database);
    if (this.req.callerAccess) ctx.sees = this.req.callerAccess;
    if (this.req.departure) ctx.departure = this.req.departure;
    if (this.req.arrivedAt !== undefined) ctx.arrivedAt = this.req.arrivedAt;
    return ctx;
  }

  database(): string {
    const header = this.req.headers['x-lance-database'] ?? this.req.headers['x-lancedb-database'];
    if (header === undefined) return this.defaultDatabase;
    const name = Array.isArray(header) ? header[0] : header;
    if (!DATABASE_NAME.test(name)) {
      throw invalidInput(`database '${name}' is not a valid name: use 1-64 characters of [A-Za-z0-9_-]`);
    }
    return name;
  }

  queryString(name: string): string | undefined {
    const v = this.query[name];
    if (v === undefined) return undefined;
    if (Array.isArray(v)) throw invalidInput(`query parameter '${name}' is given more than once`);
    return String(v);
  }

  /** Every value a query parameter is given, in order: for one a client may repeat. */
  queryStrings(name: string): string[] {
    const v = this.query[name];
    if (v === undefined) return [];
    return Array.isArray(v) ? v.map(String) : [String(v)];
  }

  queryBool(name: string, fallback: boolean): boolean {
    const v = this.queryString(name);
    if (v === undefined || v === '') return fallback;
    const s = v.toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
    throw invalidInput(`query parameter '${name}' must be true or false, got '${v}'`);
  }

  queryInt(name: string, min = 0): number | undefined {
    const v = this.queryString(name);
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n) || n < min) {
      throw invalidInput(`query parameter '${name}' must be an integer >= ${min}, got '${v}'`);
    }
    return n;
  }

  page(): PageRequest {
    const token = this.queryString('page_token');
    return { pageToken: token === '' ? undefined : token, limit: this.queryInt('limit', 1) };
  }

  /** The query's paging, or the body's where the query gives none (an empty token is none: names are never empty). */
  pageOr(body: { page_token?: string | null; limit?: number | null }): PageRequest {
    const page = this.page();
    return { pageToken: page.pageToken ?? (body.page_token || undefined), limit: page.limit ?? body.limit ?? undefined };
  }

  /** The one-part id of a transaction, checked against the body's like any id. */
  transactionId(index: number, body?: { id?: unknown }): string {
    const id = this.objectId(index, body);
    // This server's transaction ids are single names: an id of any other shape names none of them.
    if (id.length !== 1) throw new CatalogError(ErrorCode.TransactionNotFound, `transaction '${id.join(this.delimiter)}' does not exist`);
    return validateName(id[0], 'transaction id', this.delimiter);
  }

  /** Catalog state is caught up to the store's head before every answer, so any past timestamp is met. */
  private checkMinTimestamp(): void {
    const v = this.req.headers['x-lancedb-min-timestamp'];
    if (typeof v === 'string' && Number.isNaN(Date.parse(v))) {
      throw invalidInput(`x-lancedb-min-timestamp '${v}' is not an RFC 3339 timestamp`);
    }
  }
}

export type { ObjectId };

/** The `index`-th `/`-separated segment of a URL's path (the query left out), found without splitting the whole URL. */
export function pathSegment(url: string, index: number): string | undefined {
  const query = url.indexOf('?');
  const end = query === -1 ? url.length : query;
  let start = 0;
  for (let i = 0; i < index; i++) {
    const slash = url.indexOf('/', start);
    if (slash === -1 || slash >= end) return undefined;
    start = slash + 1;
  }
  const next = url.indexOf('/', start);
  return url.slice(start, next === -1 || next > end ? end : next);
}
