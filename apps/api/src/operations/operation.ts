import type { RequestContext } from '@app/application';
import type { ObjectId, TableRef } from '@app/catalog';
import type { ArrowBody } from '@app/lance';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { AccessLevel, Authenticator } from '@app/auth';
import type { RestRequest } from '../http/rest-request';
import type { ExtensionDoc } from '../openapi/served-document';
import type { AppServices } from './operation-services';

/**
 * One entry of the HTTP edge: an operation of the Lance spec (named by its operationId), or an
 * extension of this server. Routes, the access policy and the served OpenAPI document are all
 * read from the list of entries (operations/index.ts), so a route exists exactly when it has an
 * entry, and every entry says what it needs.
 */
export type Entry = Operation | RawOperation | Mount;

/** What handlers call: the application's services, and every entry of the edge (for what describes the edge itself). */
export type OperationServices = AppServices & {
  readonly operations: readonly Entry[];
  /** Who the configured credentials are: the grants check reads a principal's own key level from it. */
  readonly authenticator?: Authenticator;
};

/** How an answer is written: the handler returns the value, the edge sets status and content type. */
export type Answer =
  /** The handler's value as JSON. */
  | 'json'
  /** A string as a bare JSON string (the spec's `application/json` answer of a `string` schema). */
  | 'string'
  /** A number as a bare JSON number. */
  | 'number'
  /** An Arrow IPC file's bytes. */
  | 'arrow-file'
  /** Prometheus' text exposition format. */
  | 'prometheus'
  /** No body at all: the status is the answer (the exists operations). */
  | 'empty';

/**
 * What a route needs. `public`: no credentials (probes, the API description); `any-database`: a
 * credential with any level on any database (metrics, which tell of every database); `admin-all`:
 * admin on every database.
 */
export type RouteAccess = AccessLevel | 'public' | 'any-database' | 'admin-all';

/** What a request's body is: JSON read by a zod schema, an Arrow IPC stream, or nothing. */
export type BodyKind = z.ZodType | 'arrow-stream' | 'none';

/** What the path's `:id` names. */
export type Subject = 'table' | 'namespace' | 'transaction' | 'none';

/** Where a table request names its branch: a field of the body, the query, or either, first found first. */
export type BranchSource<B> = 'body' | 'query' | 'query, then body' | 'body, then query' | ((body: B) => string | null | undefined);

type BodyOf<K extends BodyKind> = K extends z.ZodType ? z.infer<K> : K extends 'arrow-stream' ? ArrowBody : Record<string, never>;

type SubjectOf<S extends Subject> = S extends 'table'
  ? { table: TableRef }
  : S extends 'namespace'
    ? { namespace: ObjectId }
    : S extends 'transaction'
      ? { transactionId: string }
      : unknown;

/** A request as a handler gets it: checked and decoded, in the protocol's terms. */
export type ParsedRequest<K extends BodyKind, S extends Subject> = {
  /** The body as the entry's schema read it; an Arrow stream's rows; {} without a body. */
  body: BodyOf<K>;
  /** The database, the body's `context` with the x-lance-ctx-* headers, and the principal. */
  ctx: RequestContext;
  /** The query (strings, booleans, paging), the delimiter and the path's own segments. */
  http: RestRequest;
  /** The request itself: for headers no entry field covers. */
  raw: FastifyRequest;
} & SubjectOf<S>;

interface Route {
  method: 'GET' | 'POST';
  /** Fastify's form: `/v1/table/:id/stats`. */
  path: string;
  access: RouteAccess;
  /** 200 unless said. */
  status?: number;
  /** 'json' unless said. */
  answer?: Answer;
}

/** Extensions are named by this server; they say what the served document tells of them. */
interface Named {
  /** The spec's operationId: the word a newcomer searches for. */
  operationId?: string;
  /** The name of a route the spec does not have. */
  extension?: string;
  /** For an extension: what the served OpenAPI document tells of it. */
  doc?: ExtensionDoc;
}

/** A route whose handler gets the request checked and decoded, and calls one application method. */
export interface Operation<K extends BodyKind = BodyKind, S extends Subject = Subject> extends Route, Named {
  body: K;
  subject: S;
  /** For a table: where its branch is read from; absent means main always. */
  branch?: BranchSource<BodyOf<K>>;
  /** A header the route needs even where no authentication is configured (401 code 16 without it). */
  credential?: 'x-api-key';
  /**
   * Also answered to a GET of its path, without a body: Lance's own REST namespace client asks so
   * for a few reads the spec has as POST. The query parameters such a GET reads (besides the
   * delimiter); any other is refused, not ignored.
   */
  alsoGet?: readonly string[];
  handle(request: ParsedRequest<K, S>, services: OperationServices): unknown;
}

/** A route whose handler takes the request and reply as they come: probes, streams, files. */
export interface RawOperation extends Route, Named {
  /**
   * What the path's `:id` names, when it names one: a caller whose grants decide is judged on it
   * before `serve` runs, as for every operation (a raw route with an id must say it).
   */
  subject?: Subject;
  serve(request: FastifyRequest, reply: FastifyReply, services: OperationServices): unknown;
}

/** A plugin mounted under a prefix (a page, a dashboard): every route under it has the mount's level. */
export interface Mount {
  extension: string;
  prefix: string;
  access: RouteAccess;
  /** When given, the served document lists `GET <prefix>` (a page) with it. */
  doc?: ExtensionDoc;
  install(fastify: FastifyInstance, services: OperationServices): Promise<void>;
}

/** An entry whose handler reads a checked request; its types follow from `body` and `subject`. */
export function operation<K extends BodyKind, S extends Subject>(entry: Operation<K, S>): Operation {
  return entry as unknown as Operation;
}

export function rawOperation(entry: RawOperation): RawOperation {
  return entry;
}

export function mount(entry: Mount): Mount {
  return entry;
}

export function isMount(entry: Entry): entry is Mount {
  return 'prefix' in entry;
}

export function isRaw(entry: Entry): entry is RawOperation {
  return 'serve' in entry;
}

/** The entry's name: its operationId, or the extension's name. */
export function nameOf(entry: Entry): string {
  return ('operationId' in entry && entry.operationId) || entry.extension || '?';
}
