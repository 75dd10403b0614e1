import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

type Operation = Record<string, unknown>;
type PathItem = Record<string, Operation | unknown>;
export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  servers?: unknown[];
  paths: Record<string, PathItem>;
  components?: Record<string, Record<string, unknown>>;
  security?: unknown[];
  [key: string]: unknown;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Routes this server adds to the Lance protocol; they are described here since the spec has no word on them. */
const EXTRA: Record<string, Record<string, Operation>> = {
  '/healthz': { get: op('Operations', 'Liveness: 200 while the process runs.', 'text') },
  '/readyz': { get: op('Operations', 'Readiness: 200 when the event store, Redis and the warehouse answer, 503 otherwise.', 'json') },
  '/metrics': { get: op('Operations', 'Prometheus metrics (text exposition format); with authentication configured it needs a credential for some database.', 'text') },
  '/openapi.json': { get: op('Operations', 'This document.', 'json') },
  '/v1/history/digest': { get: op('History', 'A digest of the whole catalog state, equal on every replica and after a replay.', 'json') },
  '/v1/history/table/{id}': { get: op('History', 'The audit trail of a table: every event, oldest first, with its transaction and principal.', 'json', true) },
  '/v1/history/namespace/{id}': { get: op('History', 'The audit trail of a namespace.', 'json', true) },
  '/v1/history/transaction/{id}': { get: op('History', 'The events of one transaction.', 'json', true) },
  '/v1/table/{id}/maintenance/compact': { post: op('Maintenance', 'Queues a compaction (Lance rewrites small fragments, materialising deletions; indexes take in new rows): 202 {job_id}, a transaction to follow with DescribeTransaction. Write level.', 'json', true) },
  '/v1/table/{id}/maintenance/optimize_indices': { post: op('Maintenance', 'Queues an index optimisation (rows written since a build are folded into the index): 202 {job_id}. Write level.', 'json', true) },
  '/v1/table/{id}/maintenance/expire_versions': { post: op('Maintenance', 'Queues a version expiry (older_than_seconds and/or keep_last, else the policy in force; never the latest, a tagged version or a branch base): 202 {job_id}. Admin level.', 'json', true) },
  '/v1/table/{id}/maintenance/describe': { post: op('Maintenance', "A table line's maintenance: the policy in force, its last job, its latest version's fragments. Read level.", 'json', true) },
  '/v1/history/database': {
    get: withQuery(
      op('History', 'A window of the database\'s whole history, oldest first: the `limit` events (default 100, at most 1000) before revision `before` (default: the newest); `before` in the answer names the window before it, `head` the newest revision.', 'json'),
      ['before', 'limit'],
    ),
  },
  '/v1/history/live': {
    get: withQuery(
      op('History', 'The database\'s history as server-sent events as it is appended: `event: head` first, then `event: catalog` with `id: <revision>` and the history JSON, after `after` (or Last-Event-ID; default: the head), with a heartbeat comment every 15 s.', 'text/event-stream'),
      ['after'],
    ),
  },
  '/v1/whoami': { get: op('Console', 'Who the credential is: its principal, its level in the requested database and its grants.', 'json') },
  '/ui': { get: op('Console', 'The console: a browser page over this API (the catalog, its history and jobs).', 'text/html') },
  '/v1/tables': { get: op('Enterprise', 'Every table of the database, flat (LanceDB Enterprise style).', 'json') },
  '/v1/tables/{table_name}': { post: op('Enterprise', 'Creates a table from an Arrow IPC stream (LanceDB Enterprise style).', 'json') },
};

function op(tag: string, summary: string, body: 'json' | 'text' | 'text/html' | 'text/event-stream', withId = false): Operation {
  const media = body === 'json' ? 'application/json' : body === 'text' ? 'text/plain' : body;
  return {
    tags: [tag],
    summary,
    ...(withId ? { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }] } : {}),
    responses: {
      '200': { description: 'OK', content: { [media]: { schema: body === 'json' ? { type: 'object' } : { type: 'string' } } } },
    },
  };
}

function withQuery(operation: Operation, names: string[]): Operation {
  return { ...operation, parameters: names.map((name) => ({ name, in: 'query', required: false, schema: { type: 'integer' } })) };
}

/** `/v1/table/:id/index/:index_name/stats` as OpenAPI writes it. */
export function openApiPath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function loadProtocolSpec(): OpenApiDocument {
  return parse(readFileSync(specPath(), 'utf8')) as OpenApiDocument;
}

/**
 * The protocol's document cut down to what this server serves: each path and method of the
 * spec that has a route here, plus this server's own routes. Nothing is listed that answers 406.
 */
export function servedDocument(spec: OpenApiDocument, routes: readonly { method: string; url: string }[]): OpenApiDocument {
  const served = new Map<string, Set<string>>();
  for (const r of routes) {
    const path = openApiPath(r.url);
    if (!served.has(path)) served.set(path, new Set());
    served.get(path)!.add(r.method.toLowerCase());
  }
  const paths: Record<string, PathItem> = {};
  for (const [path, methods] of served) {
    const item: PathItem = {};
    const fromSpec = spec.paths[path] ?? {};
    for (const [key, value] of Object.entries(fromSpec)) if (!HTTP_METHODS.includes(key)) item[key] = value;
    for (const method of methods) {
      const operation = (fromSpec[method] as Operation | undefined) ?? EXTRA[path]?.[method];
      if (operation) item[method] = operation;
    }
    if (Object.keys(item).some((k) => HTTP_METHODS.includes(k))) paths[path] = item;
  }
  return {
    ...spec,
    info: { ...spec.info, title: 'Lance REST catalog (event-sourced)', description: `${String(spec.info.description ?? '')}\n\nThis document lists the operations this server serves.` },
    servers: [{ url: '/', description: 'this server' }],
    security: [{ BearerAuth: [] }, { ApiKeyAuth: [] }],
    components: {
      ...spec.components,
      securitySchemes: {
        BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'OAuth2 access token; scopes lance:<read|write|admin>[:<database>]' },
        ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
  };
}

function specPath(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, 'apps/api/openapi/lance-namespace-spec.yaml');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error('apps/api/openapi/lance-namespace-spec.yaml is missing from the installation');
  }
}
