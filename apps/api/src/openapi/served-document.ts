import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

type OpenApiOperation = Record<string, unknown>;
type PathItem = Record<string, OpenApiOperation | unknown>;
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

/** An extension in the document: its group, one line, and what its answer and query hold. */
export interface ExtensionDoc {
  tag: string;
  summary: string;
  /** The answer's media type where the route's answer kind does not say it (`text/html`, `text/event-stream`). */
  media?: string;
  /** Integer query parameters it reads. */
  query?: string[];
}

/** What the document reads of a route of the edge (an entry of its table of operations). */
export interface DescribedRoute {
  method: string;
  /** Fastify's form: `/v1/table/:id/stats`. */
  path: string;
  /** The spec's operation: described by the spec itself. */
  operationId?: string;
  extension?: string;
  doc?: ExtensionDoc;
  status?: number;
  answer?: string;
}

/** A mount: listed (as `GET <prefix>`, a page) only with a description. */
export interface DescribedMount {
  prefix: string;
  extension: string;
  doc?: ExtensionDoc;
}

const MEDIA: Record<string, string> = {
  json: 'application/json',
  string: 'application/json',
  number: 'application/json',
  'arrow-file': 'application/vnd.apache.arrow.file',
  prometheus: 'text/plain',
};

/** An extension's description: the spec has no word on it, so its entry gives one. */
function extensionOperation(entry: DescribedRoute | DescribedMount, path: string, status = 200): OpenApiOperation {
  const media = entry.doc?.media ?? MEDIA[('answer' in entry && entry.answer) || 'json'] ?? 'application/json';
  const params = [
    ...[...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
    ...(entry.doc?.query ?? []).map((name) => ({ name, in: 'query', required: false, schema: { type: 'integer' } })),
  ];
  return {
    tags: [entry.doc?.tag ?? 'Operations'],
    summary: entry.doc?.summary ?? entry.extension ?? '',
    ...(params.length ? { parameters: params } : {}),
    responses: {
      [String(status)]: { description: 'OK', content: { [media]: { schema: media === 'application/json' ? { type: 'object' } : { type: 'string' } } } },
    },
  };
}

/** `/v1/table/:id/index/:index_name/stats` as OpenAPI writes it. */
export function openApiPath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The spec as JSON where the build left it (parsing its YAML costs a start a quarter of a second), else its YAML. */
export function loadProtocolSpec(): OpenApiDocument {
  const path = specPath();
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.json')) return JSON.parse(text) as OpenApiDocument;
  // Only without a build (tests from the sources): the YAML parser is not loaded at a built server's start.
  const { parse } = require('yaml') as typeof import('yaml');
  return parse(text) as OpenApiDocument;
}

type Described = DescribedRoute | DescribedMount;

const served = new WeakMap<readonly Described[], OpenApiDocument>();

/** The document of the edge made of `entries`, worked out once. */
export function servedDocumentOf(entries: readonly Described[]): OpenApiDocument {
  let document = served.get(entries);
  if (!document) served.set(entries, (document = servedDocument(loadProtocolSpec(), entries)));
  return document;
}

/**
 * The protocol's document cut down to what this server serves: each path and method of the spec
 * that has an entry here, plus this server's own routes, described by their entries.
 */
export function servedDocument(spec: OpenApiDocument, entries: readonly Described[]): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  for (const entry of entries) {
    if ('prefix' in entry) {
      if (entry.doc) paths[entry.prefix] = { get: extensionOperation(entry, entry.prefix) };
      continue;
    }
    const path = openApiPath(entry.path);
    const fromSpec = spec.paths[path] ?? {};
    const item = (paths[path] ??= Object.fromEntries(Object.entries(fromSpec).filter(([key]) => !HTTP_METHODS.includes(key))));
    const method = entry.method.toLowerCase();
    item[method] = entry.operationId ? (fromSpec[method] as OpenApiOperation) : extensionOperation(entry, entry.path, entry.status);
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
    const candidate = ['json', 'yaml'].map((ext) => join(dir, `apps/api/openapi/lance-namespace-spec.${ext}`)).find((p) => existsSync(p));
    if (candidate) return candidate;
    if (dirname(dir) === dir) throw new Error('apps/api/openapi/lance-namespace-spec.yaml is missing from the installation');
  }
}
