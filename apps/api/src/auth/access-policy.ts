import type { AccessLevel } from '@app/auth';

/**
 * `public`: no credentials (probes, the API description); `any-database`: a credential with any
 * level on any database (metrics, which tell of every database); `admin-all`: admin on every database.
 */
export type RouteAccess = AccessLevel | 'public' | 'any-database' | 'admin-all';

/**
 * What each route needs, in one place so it can be reviewed as a whole. Keys are
 * `METHOD route-template` as Fastify registers them. A route missing here stops the server at
 * start-up, so nothing is ever served without a decision.
 */
const ROUTES: Record<string, RouteAccess> = {
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'any-database',
  'GET /openapi.json': 'public',

  'GET /v1/namespace/:id/list': 'read',
  'POST /v1/namespace/:id/describe': 'read',
  'POST /v1/namespace/:id/exists': 'read',
  'GET /v1/namespace/:id/table/list': 'read',
  'POST /v1/namespace/:id/create': 'admin',
  'POST /v1/namespace/:id/drop': 'admin',

  'POST /v1/table/:id/describe': 'read',
  'POST /v1/table/:id/exists': 'read',
  'POST /v1/table/:id/count_rows': 'read',
  'POST /v1/table/:id/query': 'read',
  'POST /v1/table/:id/explain_plan': 'read',
  'POST /v1/table/:id/analyze_plan': 'read',
  'POST /v1/table/:id/stats': 'read',
  'POST /v1/table/:id/index/list': 'read',
  'POST /v1/table/:id/index/:index_name/stats': 'read',
  'POST /v1/table/:id/tags/list': 'read',
  'POST /v1/table/:id/tags/version': 'read',
  'POST /v1/table/:id/version/list': 'read',
  'POST /v1/table/:id/version/describe': 'read',
  'POST /v1/table/:id/branches/list': 'read',
  'POST /v1/table/:id/maintenance/describe': 'read',

  'POST /v1/table/:id/declare': 'write',
  'POST /v1/table/:id/create': 'write',
  'POST /v1/table/:id/insert': 'write',
  'POST /v1/table/:id/merge_insert': 'write',
  'POST /v1/table/:id/update': 'write',
  'POST /v1/table/:id/delete': 'write',
  'POST /v1/table/:id/add_columns': 'write',
  'POST /v1/table/:id/backfill_column': 'write',
  'POST /v1/materialized_view/:id/create': 'write',
  'POST /v1/materialized_view/:id/refresh': 'write',
  'POST /v1/table/:id/alter_columns': 'write',
  'POST /v1/table/:id/drop_columns': 'write',
  'POST /v1/table/:id/update_field_metadata': 'write',
  'POST /v1/table/:id/schema_metadata/update': 'write',
  'POST /v1/table/:id/create_index': 'write',
  'POST /v1/table/:id/create_scalar_index': 'write',
  'POST /v1/table/:id/index/:index_name/drop': 'write',
  'POST /v1/table/:id/tags/create': 'write',
  'POST /v1/table/:id/tags/update': 'write',
  'POST /v1/table/:id/tags/delete': 'write',
  'POST /v1/table/:id/branches/create': 'write',
  'POST /v1/table/:id/maintenance/compact': 'write',
  'POST /v1/table/:id/maintenance/optimize_indices': 'write',
  'POST /v1/table/:id/version/create': 'write',
  'POST /v1/table/:id/restore': 'write',
  'POST /v1/table/version/batch-create': 'write',
  'POST /v1/table/batch-commit': 'write',

  'POST /v1/table/:id/drop': 'admin',
  'POST /v1/table/:id/deregister': 'admin',
  'POST /v1/table/:id/register': 'admin',
  'POST /v1/table/:id/rename': 'admin',
  'POST /v1/table/:id/version/delete': 'admin',
  'POST /v1/table/:id/branches/delete': 'admin',
  'POST /v1/table/:id/maintenance/expire_versions': 'admin',

  'POST /v1/transaction/:id/describe': 'read',
  'POST /v1/transaction/:id/alter': 'write',

  'GET /v1/history/digest': 'read',
  'GET /v1/history/table/:id': 'read',
  'GET /v1/history/namespace/:id': 'read',
  'GET /v1/history/transaction/:id': 'read',
  'GET /v1/history/database': 'read',
  'GET /v1/history/live': 'read',

  // The console: its pages hold no data (what it shows comes through the routes above, with the
  // caller's own credential); whoami tells a credential's own grants, so any credential may ask.
  'GET /ui': 'public',
  'GET /ui/*': 'public',
  'GET /v1/whoami': 'any-database',

  'GET /v1/table': 'read',
  'GET /v1/tables': 'read',
  'POST /v1/tables/:table_name': 'write',
};

/**
 * The operations a batch body carries, each with the route it has on its own: inside a batch
 * (BatchCommitTables, BatchCreateTableVersions) an operation needs what that route needs, so a
 * batch is never a way around a route's level.
 */
const BATCH_OPERATION_ROUTES = {
  declare_table: 'POST /v1/table/:id/declare',
  create_table_version: 'POST /v1/table/:id/version/create',
  delete_table_versions: 'POST /v1/table/:id/version/delete',
  deregister_table: 'POST /v1/table/:id/deregister',
} as const;

export type BatchOperationKind = keyof typeof BATCH_OPERATION_ROUTES;

/** The level an operation of a batch needs: its own route's. */
export function batchOperationLevel(kind: BatchOperationKind): AccessLevel {
  const access = ROUTES[BATCH_OPERATION_ROUTES[kind]];
  if (access !== 'read' && access !== 'write' && access !== 'admin') throw new Error(`batch operation ${kind} has no database level in access-policy.ts`);
  return access;
}

/** Routes registered by plugins under a prefix: the API page and the queue dashboard. */
const PREFIXES: [string, RouteAccess][] = [
  ['/docs', 'public'],
  ['/admin/queues', 'admin-all'],
];

/** Asked on every request with one of a few hundred route patterns: each is worked out once. */
const known = new Map<string, RouteAccess | undefined>();

export function accessOf(method: string, url: string): RouteAccess | undefined {
  const key = `${method} ${url}`;
  if (known.has(key)) return known.get(key);
  const access = lookUp(method, url);
  known.set(key, access);
  return access;
}

function lookUp(method: string, url: string): RouteAccess | undefined {
  if (method === 'HEAD' || method === 'OPTIONS') method = 'GET';
  const exact = ROUTES[`${method} ${url.replace(/\/$/, '') || '/'}`];
  if (exact) return exact;
  return PREFIXES.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`))?.[1];
}
