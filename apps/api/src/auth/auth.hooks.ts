import { ANONYMOUS, Authenticator, AuthenticationFailed, Principal, SERVICE, allows } from '@app/auth';
import { ErrorCode } from '@app/catalog';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accessOf } from './access-policy';
import { RouteAccess } from '../operations/operation';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who sent the request, once authenticated. */
    principal?: Principal;
  }
}

const DATABASE_HEADERS = ['x-lance-database', 'x-lancedb-database'];

/**
 * Authentication (401 code 16) and authorization (403 code 15) as Fastify hooks, before any
 * handler runs, so a refused request changes nothing. They run after body parsing because the
 * body's `identity` counts when no credential header is sent.
 */
export function installAuth(fastify: FastifyInstance, authenticator: Authenticator, defaultDatabase: string): void {
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
    return;
  }

  fastify.addHook('preValidation', async (request, reply) => {
    const access: RouteAccess | undefined = request.routeOptions.url ? accessOf(request.method, request.routeOptions.url) : undefined;
    if (access === 'public') return;
    try {
      request.principal = await authenticator.authenticate({
        authorization: header(request, 'authorization'),
        apiKey: header(request, 'x-api-key'),
        identity: identityOf(request.body),
      });
    } catch (e) {
      if (!(e instanceof AuthenticationFailed)) throw e;
      // A browser on the dashboard is asked for a password (the API key); API clients get JSON only.
      if (access === 'admin-all') void reply.header('www-authenticate', 'Basic realm="lance-catalog admin", charset="UTF-8"');
      return refuse(reply, request, 401, ErrorCode.Unauthenticated, e.message);
    }
    if (access === undefined) return;
    if (access === 'any-database') {
      if (request.principal.grants.size > 0) return;
      return refuse(reply, request, 403, ErrorCode.PermissionDenied, `${request.principal.name} holds no access to any database`);
    }
    const database = access === 'admin-all' ? '*' : databaseOf(request, defaultDatabase);
    const level = access === 'admin-all' ? 'admin' : access;
    if (!allows(request.principal, database, level)) {
      return refuse(
        reply,
        request,
        403,
        ErrorCode.PermissionDenied,
        `${request.principal.name} may not ${level === 'read' ? 'read' : level === 'write' ? 'write' : 'administer'} ${database === '*' ? 'every database' : `database '${database}'`}`,
      );
    }
  });
}

function refuse(reply: FastifyReply, request: FastifyRequest, status: number, code: number, error: string) {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send({ error, code, instance: request.url.split('?')[0] });
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
