import { levelIn } from '@app/auth';
import type { GrantScope } from '@app/application';
import { CatalogError, ErrorCode, GrantFact, Securable, granteeKeysOf, invalidInput, validateId } from '@app/catalog';
import type { FastifyRequest } from 'fastify';
import { checkGrantBody, grantBody } from '../http/body-schemas';
import { RestRequest } from '../http/rest-request';
import { rankOnSecurable, requireAdminOn } from './grant-gate';
import { operation } from './operation';

const ADMIN_NEEDED = 'that needs admin on the securable or above it';

/** The grant a create or revoke names: admin on its securable, or above it, may grant and revoke on it, up to admin. */
function adminsGrant(request: FastifyRequest, database: string, body: Pick<GrantFact, 'grantee' | 'securable' | 'level'>, what: string): GrantFact {
  const fact = { grantee: body.grantee, securable: body.securable, level: body.level } as GrantFact;
  requireAdminOn(request, database, fact.securable, `${what}: ${ADMIN_NEEDED}`);
  return fact;
}

function rfc3339(text: string): number {
  const at = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(at)) throw invalidInput(`at '${text}' is not an RFC 3339 time`);
  return at;
}

/** A delimited id from the query (`a$b`), or undefined. */
function queryId(http: RestRequest, name: string): string[] | undefined {
  const v = http.queryString(name);
  if (v === undefined || v === '') return undefined;
  return validateId(v.split(http.delimiter), name, http.delimiter);
}

/** Grants on the namespace tree, recorded as events of the database's log (docs/security.md, "Grants"). */
export const GRANT_EXTENSIONS = [
  operation({
    extension: 'CreateGrant',
    doc: {
      tag: 'Grants',
      summary:
        'Grant a principal or a role a level (read, write, admin) on the database, a namespace or a table, and everything below it. Recorded as GrantIssued; granting what is held records nothing. Needs admin on the securable or above it.',
    },
    method: 'POST',
    path: '/v1/grants/create',
    access: 'admin',
    body: grantBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => s.grants.issue(ctx, adminsGrant(raw, ctx.database, body, 'grant on it')),
  }),
  operation({
    extension: 'RevokeGrant',
    doc: { tag: 'Grants', summary: 'Revoke one grant (the same body as CreateGrant). Recorded as GrantRevoked; revoking what is not held records nothing.' },
    method: 'POST',
    path: '/v1/grants/revoke',
    access: 'admin',
    body: grantBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => s.grants.revoke(ctx, adminsGrant(raw, ctx.database, body, 'revoke on it')),
  }),
  operation({
    extension: 'ListGrants',
    doc: {
      tag: 'Grants',
      summary:
        'The grants held now (or as of `at`, RFC 3339), paged (page_token, limit): narrowed to a grantee (grantee_principal, grantee_role) and to those that reach a namespace or table (namespace, table: delimited ids). A caller sees the grants on what it administers and its own.',
    },
    method: 'GET',
    path: '/v1/grants',
    access: 'read',
    body: 'none',
    subject: 'none',
    handle: ({ ctx, http, raw }, s) => {
      const namespace = queryId(http, 'namespace');
      const table = queryId(http, 'table');
      if (namespace && table) throw invalidInput('name one of namespace and table');
      const atText = http.queryString('at');
      const at = atText ? rfc3339(atText) : undefined;
      const principal = raw.principal;
      const everything = rankOnSecurable(raw, ctx.database, { database: true }) >= 3;
      const scope: GrantScope = everything
        ? 'everything'
        : { grantees: principal ? granteeKeysOf(principal.name, principal.roles) : [], administers: raw.callerAccess?.administers() };
      return s.grants.list(
        ctx,
        {
          principal: http.queryString('grantee_principal') || undefined,
          role: http.queryString('grantee_role') || undefined,
          reaching: namespace ? { namespace } : table ? { table } : undefined,
        },
        http.page(),
        at,
        scope,
      );
    },
  }),
  operation({
    extension: 'CheckGrant',
    doc: {
      tag: 'Grants',
      summary:
        "A principal's level on a table or namespace, now or as of `at` (RFC 3339), with what gives it (`because`: its keys' level on the database, and each grant to it or its roles). Admins of the securable may ask of anyone; others of themselves.",
    },
    method: 'POST',
    path: '/v1/grants/check',
    access: 'read',
    body: checkGrantBody,
    subject: 'none',
    handle: ({ ctx, body, raw }, s) => {
      const securable: Securable = body.table ? { table: body.table } : { namespace: body.namespace! };
      const caller = raw.principal;
      const self = caller !== undefined && caller.name === body.principal;
      if (!self) requireAdminOn(raw, ctx.database, securable, `check the access of '${body.principal}': ${ADMIN_NEEDED}`);
      const at = body.at != null ? rfc3339(body.at) : undefined;
      const keys = s.authenticator?.keysOf(body.principal, ctx.database) ?? { roles: [] };
      // A caller asking of itself (and not an admin of it) is answered for the roles it holds, not others.
      const roles = self && rankOnSecurable(raw, ctx.database, securable) < 3 ? caller.roles : [...new Set([...(body.roles ?? []), ...keys.roles])];
      const keyLevel = self && caller.via !== 'api-key' ? levelIn(caller, ctx.database) : keys.level;
      return s.grants.check(ctx, { principal: body.principal, roles, keyLevel }, securable, at);
    },
  }),
];
