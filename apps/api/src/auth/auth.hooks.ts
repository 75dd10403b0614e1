import { ANONYMOUS, Authenticator, AuthenticationFailed, Credentials, Principal, SERVICE, allows, levelIn } from '@app/auth';
import { CallerAccess, ErrorCode, granteeKeysOf } from '@app/catalog';
import type { ProjectionRegistry } from '@app/projections';
import { unavailableAs503 } from '@app/application';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accessOf } from './access-policy';
import { accessByGrants, judgedByGrants } from './principal-access';
import { RouteAccess } from '../operations/operation';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who sent the request, once authenticated. */
    principal?: Principal;
    /** Judged on its headers before its body was read. */
    authenticated?: boolean;
    /** Sent no credential header: its credential, if any, is its body's `identity`, judged once the body is read. */
    identityInBody?: boolean;
    /**
     * Set when the credential's own level on the database is short of the route's and grants in
     * the database's log may make up for it: the edge then judges the operation's subject by them.
     */
    callerAccess?: CallerAccess;
    /** The caller's level on the request's subject, as the grants judged it. */
    subjectLevel?: 'read' | 'write' | 'admin';
    /** performance.now() as the request arrived: what its reads of the state must be caught up from. */
    arrivedAt?: number;
  }
}

const DATABASE_HEADERS = ['x-lance-database', 'x-lancedb-database'];

/**
 * Authentication (401 code 16) and authorization (403 code 15) as Fastify hooks, before any
 * handler runs, so a refused request changes nothing, and before its body is read whenever the
 * credential comes in a header. The body's `identity` counts when no credential header is sent,
 * for small JSON bodies only (read after a refusal could otherwise cost the server a parse).
 */
export function installAuth(fastify: FastifyInstance, authenticator: Authenticator, defaultDatabase: string, projections: ProjectionRegistry): OnRequestStep {
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      if (!accessOf(method, route.url ?? route.path)) {
        throw new Error(`route ${method} ${route.url} has no entry in operations/index.ts, so no access level`);
      }
    }
  });

  // With nothing configured every caller is the anonymous principal, who may do anything: no
  // level is checked, so no promise is made per request either. The server's own calls are still
  // told apart by the service key: they, not clients, get the warehouse's own storage options.
  if (!authenticator.enabled) {
    fastify.addHook('preValidation', (request, _reply, done) => {
      request.principal = authenticator.isServiceKey(header(request, 'x-api-key')) ? SERVICE : ANONYMOUS;
      done();
    });
    return (_request, _reply, done) => done();
  }

  fastify.addHook('preValidation', (request, reply, done) => {
    if (request.authenticated) return done();
    const access = routeAccess(request);
    if (access === 'public') return done();
    settle(() => judge(request, reply, access, { authorization: undefined, apiKey: undefined, identity: identityOf(request.body) }), done);
  });

  // Before a byte of the body is read: a request naming its credential in a header is judged on
  // it; one without may name it in a small JSON body's `identity` (the spec's field), and any other
  // is refused here, so an unauthenticated caller never has a body read or parsed. A step of the
  // edge's one onRequest hook (bootstrap.ts), judged at once for an API key: a promise is made only
  // when a token or the grants need one.
  return (request, reply, done) => {
    const access = routeAccess(request);
    if (access === 'public') return done();
    const credentials = { authorization: header(request, 'authorization'), apiKey: header(request, 'x-api-key') };
    if (credentials.authorization === undefined && credentials.apiKey === undefined && mayCarryIdentity(request)) {
      request.identityInBody = true;
      return done();
    }
    request.authenticated = true;
    settle(() => judge(request, reply, access, credentials), done);
  };

  /**
   * Whether grants in the database's log may give the caller what its credential's level does not:
   * it holds one there (by name or role), as of the log's head, so a grant or revoke made through
   * any replica counts from the next request. The operation's subject is judged by them later, once
   * the path is read (operations/grant-gate.ts).
   */
  async function byGrants(request: FastifyRequest, database: string, grantees?: string[]): Promise<boolean> {
    const principal = request.principal!;
    if (!judgedByGrants(principal, database)) return false;
    const state = (await unavailableAs503(() => projections.current(database, request.arrivedAt))).state;
    const access = accessByGrants(principal, database, state, grantees);
    if (!access) return false;
    request.callerAccess = access;
    return true;
  }

  /** Judges the credentials, then the principal's access: whether the request was refused (answered). */
  function judge(request: FastifyRequest, reply: FastifyReply, access: RouteAccess | undefined, credentials: Credentials): Verdict {
    const unknown = (e: unknown) => {
      if (!(e instanceof AuthenticationFailed)) throw e;
      // A browser on the dashboard is asked for a password (the API key); API clients get JSON only.
      if (access === 'admin-all') void reply.header('www-authenticate', 'Basic realm="lance-catalog admin", charset="UTF-8"');
      return refuse(reply, request, 401, ErrorCode.Unauthenticated, e.message);
    };
    let principal: Principal | Promise<Principal>;
    try {
      principal = authenticator.authenticate(credentials);
    } catch (e) {
      return unknown(e);
    }
    if (principal instanceof Promise) return principal.then((p) => authorise(request, reply, access, p), unknown);
    return authorise(request, reply, access, principal);
  }

  function authorise(request: FastifyRequest, reply: FastifyReply, access: RouteAccess | undefined, principal: Principal): Verdict {
    request.principal = principal;
    if (access === undefined || access === 'public') return false;
    if (access === 'any-database') {
      if (principal.grants.size > 0) return false;
      return byGrants(request, databaseOf(request, defaultDatabase)).then(
        (granted) => !granted && refuse(reply, request, 403, ErrorCode.PermissionDenied, `${principal.name} holds no access to any database`),
      );
    }
    const database = access === 'admin-all' ? '*' : databaseOf(request, defaultDatabase);
    const level = access === 'admin-all' ? 'admin' : access;
    if (!allows(principal, database, level)) {
      const denied = () =>
        refuse(
          reply,
          request,
          403,
          ErrorCode.PermissionDenied,
          `${principal.name} may not ${level === 'read' ? 'read' : level === 'write' ? 'write' : 'administer'} ${database === '*' ? 'every database' : `database '${database}'`}`,
        );
      return access === 'admin-all' ? denied() : byGrants(request, database).then((granted) => !granted && denied());
    }
    // A credential whose own level suffices but is not admin may hold more on the subject by
    // grants (the credentials vended for a table follow its level there). Whether it holds any is
    // first asked of the state as folded here, without a catch-up, so a request without grants
    // costs a lookup; one that holds some is judged on the state caught up (a revoke counts).
    if ((access === 'read' || access === 'write') && levelIn(principal, database) !== 'admin' && judgedByGrants(principal, database)) {
      const grantees = granteeKeysOf(principal.name, principal.roles);
      if (projections.get(database).state.grants.holdsAny(grantees)) return byGrants(request, database, grantees).then(() => false);
    }
    return false;
  }
}

/** The access the request's route needs (undefined for a route the edge does not know). */
export function routeAccess(request: FastifyRequest): RouteAccess | undefined {
  // Fastify builds routeOptions afresh on every read.
  const url = request.routeOptions.url;
  return url ? accessOf(request.method, url) : undefined;
}

/** The largest JSON body read to find an `identity` in it when no credential header came. */
const IDENTITY_BODY_MAX = 64 * 1024;

/**
 * Whether a request without a credential header may still name one in its body: a JSON body of
 * known, small length (one without a content type is JSON where its route reads JSON,
 * untyped-body-parser.ts). Anything else (no body, Arrow, chunked, large) has no identity to read.
 */
function mayCarryIdentity(request: FastifyRequest): boolean {
  const type = header(request, 'content-type');
  const json = type === undefined ? !request.routeOptions.config.arrowBody : /^application\/json\b/i.test(type);
  const length = Number(header(request, 'content-length'));
  return json && Number.isInteger(length) && length > 0 && length <= IDENTITY_BODY_MAX;
}

/** One step of an onRequest hook: calls `done` to go on, or answers the request and does not. */
export type OnRequestStep = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** Whether the request was answered here: true once refused. */
type Verdict = boolean | Promise<boolean>;

/** Runs a hook's verdict to Fastify's callback: on, unless the request was refused (answered) here. */
function settle(verdict: () => Verdict, done: (error?: Error) => void): void {
  let result: Verdict;
  try {
    result = verdict();
  } catch (e) {
    return done(e as Error);
  }
  if (result === false) return done();
  // A rejection with no error would read as "go on" to Fastify's callback: never let one through.
  if (result !== true) result.then((refused) => refused || done(), (e: unknown) => done(e instanceof Error ? e : new Error(`authentication failed: ${String(e)}`)));
}

function refuse(reply: FastifyReply, request: FastifyRequest, status: number, code: number, error: string): true {
  // A body not read yet is not read at all: the connection ends with the answer instead of draining it.
  if (request.body === undefined && (header(request, 'transfer-encoding') !== undefined || Number(header(request, 'content-length')) > 0)) {
    void reply.header('connection', 'close');
  }
  void reply.code(status).header('content-type', 'application/json; charset=utf-8').send({ error, code, instance: request.url.split('?')[0] });
  return true;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function databaseOf(request: FastifyRequest, fallback: string): string {
  for (const name of DATABASE_HEADERS) {
    const v = header(request, name);
    if (v !== undefined) return v;
  }
  return fallback;
}

function identityOf(body: unknown): { api_key?: unknown; auth_token?: unknown } | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return undefined;
  const identity = (body as { identity?: unknown }).identity;
  return identity && typeof identity === 'object' ? (identity as { api_key?: unknown; auth_token?: unknown }) : undefined;
}
