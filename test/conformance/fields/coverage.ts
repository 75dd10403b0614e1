/**
 * The field-level conformance suite's ledger: what the spec asks of each operation, named by
 * tokens, and what names them.
 *
 * TOKENS. Every spec item is one token:
 *
 *   Op.field        a property of Op's JSON request body (top level), e.g. `QueryTable.k`
 *   Op.field.sub    a property one level inside a body property whose schema is an object or an
 *                   array of objects, e.g. `AlterTransaction.actions.setStatusAction`
 *                   (every such container is descended into, except those in NOT_DESCENDED)
 *   Op?param        a query parameter, e.g. `MergeInsertIntoTable?when_matched_update_all`
 *   Op#status       a documented response status, e.g. `CreateTable#409`, `QueryTable#5XX`
 *
 * Path parameters (`id`, `index_name`) are not items of their own: every request names them.
 * Arrow IPC and bare-map bodies (InsertIntoTable, MergeInsertIntoTable, CreateTable,
 * UpdateTableSchemaMetadata) have no named properties; their content is what the operation's
 * success status tests.
 *
 * NAMING. A test names the tokens it covers at the start of its title, in brackets:
 * `covers(['CreateNamespace.mode', 'CreateNamespace#409'], 'Create refuses ...', fn)` registers
 * `it('[CreateNamespace.mode CreateNamespace#409] Create refuses ...')`. A test names a token only
 * when it checks the item's effect (the answer or the state it leaves), not only that it is
 * accepted. Loops over every operation (every-operation.spec.ts, unavailable.spec.ts) register one
 * test per operation for the behaviours all operations share: the credential (401, 403, the body's
 * `identity`), a missing subject (404), a malformed body (400), the body's `id` and `context`, the
 * `delimiter` query parameter, and an unreachable event store (503).
 *
 * ENFORCEMENT. coverage.spec.ts loads every *.spec.ts file of this folder with jest's globals
 * replaced by recorders (registeredTitles), so it sees the titles the suites register without
 * starting a server or reading their source, and fails on every spec item no title names, every
 * token naming nothing the spec has, and every exemption that is not exact (a token a test names,
 * or one the spec does not have).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

export const SPEC_PATH = resolve(__dirname, '../../../apps/api/openapi/lance-namespace-spec.yaml');

export type ItemKind = 'field' | 'nested' | 'query' | 'status';
export interface SpecItem {
  token: string;
  operationId: string;
  kind: ItemKind;
}

/** Body containers whose inner properties are not items, and why. */
export const NOT_DESCENDED: Record<string, string> = {
  'ExplainTableQueryPlan.query': "it is QueryTable's own request, whose fields are QueryTable's tokens; ExplainTableQueryPlan.query names the plan following the query",
  'CreateMaterializedView.udtf_spec': 'a UDTF or chunker view is refused whole (406 code 0), so no field of its descriptor is read',
};
/** Present in every request body; covered as themselves by the loops over every operation. */
const GENERIC_CONTAINERS = new Set(['identity', 'context']);

type Schema = Record<string, any>;

let cachedSpec: Schema | undefined;
export function loadSpec(): Schema {
  return (cachedSpec ??= parse(readFileSync(SPEC_PATH, 'utf8')) as Schema);
}

function resolveRef(spec: Schema, node: Schema | undefined): Schema | undefined {
  let n = node;
  while (n && typeof n.$ref === 'string') n = (n.$ref as string).replace(/^#\//, '').split('/').reduce((o: Schema, k: string) => o?.[k], spec);
  return n;
}

/** The object schema a property holds: itself, its array items, or the object branch of a oneOf/anyOf. */
function objectOf(spec: Schema, node: Schema | undefined): Schema | undefined {
  const n = resolveRef(spec, node);
  if (!n) return undefined;
  if (n.items) return objectOf(spec, n.items);
  for (const branch of [...(n.oneOf ?? []), ...(n.anyOf ?? []), ...(n.allOf ?? [])]) {
    const o = objectOf(spec, branch);
    if (o) return o;
  }
  return n.properties ? n : undefined;
}

export interface SpecOperation {
  operationId: string;
  method: 'GET' | 'POST';
  /** The spec's path, `/v1/table/{id}/query`. */
  path: string;
  /** JSON body property names (empty for Arrow, bare-map and body-less requests). */
  fields: string[];
  query: string[];
  statuses: string[];
  jsonBody: boolean;
}

export function specOperations(): SpecOperation[] {
  const spec = loadSpec();
  const out: SpecOperation[] = [];
  for (const [path, item] of Object.entries(spec.paths as Record<string, Schema>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !op.operationId) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Schema) => resolveRef(spec, p)!);
      const content = op.requestBody ? (resolveRef(spec, op.requestBody)!.content as Record<string, Schema>) : undefined;
      const body = content?.['application/json'] ? resolveRef(spec, content['application/json'].schema) : undefined;
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase() as 'GET' | 'POST',
        path,
        fields: Object.keys(body?.properties ?? {}),
        query: params.filter((p) => p.in === 'query').map((p) => p.name as string),
        statuses: Object.keys(op.responses ?? {}),
        jsonBody: !!body,
      });
    }
  }
  return out;
}

/** Every item of the spec, as tokens. */
export function specItems(): SpecItem[] {
  const spec = loadSpec();
  const items: SpecItem[] = [];
  for (const op of specOperations()) {
    const id = op.operationId;
    const body = op.jsonBody ? resolveRef(spec, resolveRef(spec, loadOperation(spec, op).requestBody)!.content['application/json'].schema)! : undefined;
    for (const field of op.fields) {
      items.push({ token: `${id}.${field}`, operationId: id, kind: 'field' });
      if (GENERIC_CONTAINERS.has(field) || NOT_DESCENDED[`${id}.${field}`]) continue;
      const inner = objectOf(spec, body!.properties[field]);
      for (const sub of Object.keys(inner?.properties ?? {})) items.push({ token: `${id}.${field}.${sub}`, operationId: id, kind: 'nested' });
    }
    for (const q of op.query) items.push({ token: `${id}?${q}`, operationId: id, kind: 'query' });
    for (const s of op.statuses) items.push({ token: `${id}#${s}`, operationId: id, kind: 'status' });
  }
  return items;
}

function loadOperation(spec: Schema, op: SpecOperation): Schema {
  return spec.paths[op.path][op.method.toLowerCase()];
}

const TOKEN = /^[A-Za-z]+(\.[A-Za-z_]+){1,2}$|^[A-Za-z]+\?[a-z_]+$|^[A-Za-z]+#([1-5]\d\d|5XX)$/;

/** The tokens a title names: the bracketed list it starts with. */
export function tokensOfTitle(title: string): string[] {
  const m = /^\[([^\]]+)\]/.exec(title);
  return m ? m[1].split(/\s+/).filter(Boolean) : [];
}

export function isToken(s: string): boolean {
  return TOKEN.test(s);
}

/** Registers a test that covers `tokens`: its title starts with them. */
export function covers(tokens: string[], title: string, fn: () => Promise<unknown> | void, timeout?: number): void {
  if (tokens.length === 0) throw new Error(`covers('${title}'): name at least one token`);
  for (const t of tokens) if (!isToken(t)) throw new Error(`covers('${title}'): '${t}' is not a token (see coverage.ts)`);
  it(`[${tokens.join(' ')}] ${title}`, fn as () => Promise<unknown>, timeout);
}

/** The suites whose tests are one per operation, made by a loop over the spec. */
export const GENERIC_FILES = ['every-operation.spec.ts', 'unavailable.spec.ts'];

export interface Exemption {
  tokens: string[];
  reason: string;
}

const statusesOf = (status: string) =>
  specOperations()
    .filter((op) => op.statuses.includes(status))
    .map((op) => `${op.operationId}#${status}`);

/**
 * Items no test names, each group with its reason (coverage.spec.ts prints them). Kept exact: an
 * exempt token a test names, or one the spec lacks, fails the meta-test.
 */
export function exemptions(): Exemption[] {
  return [
    {
      tokens: statusesOf('5XX'),
      reason:
        'no request makes a sound server fail; whatever fails unexpectedly is answered 500 code 18 in JSON by the one error filter every route shares ' +
        '(a Lance crash inside a request: test/e2e/data-plane-containment.e2e.spec.ts)',
    },
    {
      tokens: ['ListNamespaces#406', 'ListTables#406', 'CreateNamespace#406'],
      reason: 'the spec documents 406 for a server that does not support the operation; this server supports each in full, so no request of it answers 406',
    },
    {
      tokens: ['RegisterTable#406'],
      reason:
        '406 code 0 when tables are unmanaged (MANAGED_VERSIONING=false) on an object store that refuses conditional PUTs (Swift), where no client could commit; ' +
        'needs Swift: test/e2e/s3-lancedb-client.e2e.spec.ts proves it for DeclareTable, and RegisterTable makes the same check (TableService.requireClientCommits)',
    },
    {
      tokens: ['MergeInsertIntoTable?use_index'],
      reason:
        "changes how Lance finds the matching rows (an index lookup or a scan), never which: no answer or state tells the two apart. It reaches Lance's merge builder " +
        '(data-plane-executor.ts); the ?on test merges with use_index=false and gets the same rows',
    },
  ];
}

/**
 * The titles a set of spec files registers, read by loading them with jest's globals replaced by
 * recorders: `describe` runs its body, `it`/`test` record their titles, hooks do nothing. Nothing
 * the suites do in hooks or tests runs.
 */
export function registeredTitles(files: string[]): Map<string, string[]> {
  const g = globalThis as Record<string, unknown>;
  const names = ['describe', 'it', 'test', 'beforeAll', 'afterAll', 'beforeEach', 'afterEach'];
  const saved = Object.fromEntries(names.map((n) => [n, g[n]]));
  const byFile = new Map<string, string[]>();
  let titles: string[] = [];
  const record = (title: string) => void titles.push(title);
  const describe = (_name: string, body: () => void) => body();
  Object.assign(g, {
    describe: Object.assign(describe, { skip: describe, only: describe }),
    it: Object.assign(record, { skip: record, only: record }),
    test: Object.assign(record, { skip: record, only: record }),
    beforeAll: () => undefined,
    afterAll: () => undefined,
    beforeEach: () => undefined,
    afterEach: () => undefined,
  });
  try {
    for (const file of files) {
      titles = [];
      jest.isolateModules(() => require(file));
      byFile.set(file, titles);
    }
  } finally {
    Object.assign(g, saved);
  }
  return byFile;
}

export function fieldSuiteFiles(): string[] {
  return readdirSync(__dirname)
    .filter((f) => f.endsWith('.spec.ts') && f !== 'coverage.spec.ts')
    .sort()
    .map((f) => join(__dirname, f));
}
