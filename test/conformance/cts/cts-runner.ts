/**
 * Our runner for the Lance project's behavioural conformance contracts ("CTS"), copied unchanged
 * under ./contracts (see contracts/SOURCE.md). The contracts are theirs; this runner is ours: it
 * drives every case over HTTP against the real server, the way the REST binding
 * (/work/shared/reference/rest-binding.md) maps the spec's models onto HTTP.
 *
 * THE CONTRACT FORMAT, as the files state it (nothing here is taken from their Rust generator):
 *
 * - `main.yaml`: `version: 1`; `capabilities`, a list of `{id, description}`, every flag an
 *   implementation may declare; `includes`, the per-domain files, in order.
 * - Each included file: `contracts`, a list of operation blocks `{operation, requires_capabilities?,
 *   skip_reason?, cases}`. `operation` is the spec's operationId. An operation block may carry a
 *   `skip_reason` and no cases (BatchCreateTableVersions does).
 * - A case: `{id, description, requires_capabilities?, given, when, then?}`. Case ids are unique
 *   over all files. A case runs only when the implementation declares every flag in its own
 *   `requires_capabilities` and in its operation block's; otherwise it is skipped (main.yaml: "skips
 *   any case whose required flags are missing").
 * - `given`: `{state, fixtures?}`. `state` names the starting catalog (`empty_catalog`,
 *   `namespace_exists`, `namespace_with_child`); `fixtures` are what is built on it, in order:
 *   `{kind: namespace, id}` (CreateNamespace) or `{kind: table, id}` (CreateTable with the standard
 *   zero-row body below). The state name only describes what the fixtures build; we check that it
 *   does (a `namespace_exists` case must build a namespace, a `namespace_with_child` one a child).
 * - `when` is one of two shapes:
 *     - `{request}`: one call of the block's operation, judged by the case's `then`;
 *     - a list of steps `{op, request, expect}`, run in order, each judged by its own `expect`
 *       (such cases have no `then`).
 * - A `request` is the operation's request model as the spec names its fields, `id` being the
 *   object's identifier as an array of parts (`[]` = the root namespace). Arrow-bodied operations
 *   carry `request_data: empty`: the harness's standard zero-row Arrow IPC stream over one `int32`
 *   column; we name that column `id`, the column the cases index, merge on, alter and drop.
 * - `then` / `expect`: either `status: ok` (the call succeeds) with optional
 *   `response_assertions: [{kind, value}]` (kinds: namespaces_count, namespaces_contains,
 *   tables_count, tables_contains, count_eq), or `error_code: N` with optional
 *   `error_code_alternatives: [M, ...]` (any of them is accepted).
 * - Strings may hold placeholders `{{Name}}` (`{{TblA}}`, `{{ns_a}}`, `{{TblALocation}}`...). The
 *   contracts give them no values: the harness chooses names, and a `...Missing`/`..._missing`
 *   name is one nothing creates.
 *
 * HOW WE RUN A CASE:
 *
 * - Every case runs in a database of its own (`x-lance-database: cts_<n>_<run>`), which on this
 *   server is a separate, empty catalog: that is `empty_catalog`, and nothing leaks between cases.
 * - Placeholders: `{{TblA}}` becomes `tbl_a`, `{{NsMissing}}` `ns_missing`, `{{ns_a}}` `ns_a`
 *   (snake case of the placeholder); `{{XLocation}}` is a relative location for table X,
 *   `<name of X>.lance`.
 * - Each call is bound onto HTTP from the spec (apps/api/openapi/lance-namespace-spec.yaml, the
 *   same text as /work/shared/reference/lance-namespace-spec.yaml): its method and path by
 *   operationId; `{id}` is the parts joined by `$` (the root: `$`) and form-urlencoded; any other
 *   path parameter (`{index_name}`) comes from the request field of that name; a request field the
 *   operation declares as a query parameter (`mode`, `on`, `when_matched_update_all_filt`...) goes in
 *   the query; the rest goes in the body the operation declares: a JSON object (with `id`, which the
 *   binding allows when it equals the path's), the bare string map for UpdateTableSchemaMetadata,
 *   the Arrow IPC stream for `request_data`, or no body at all for operations the spec gives none
 *   (a request field that then has nowhere to go is a runner error, not silently dropped).
 * - Judging: `status: ok` needs a 2xx answer and every response assertion to hold. `error_code`
 *   needs a JSON error body whose integer `code` is the expected one or an alternative, AND the
 *   HTTP status the binding gives that code (e.g. 4 -> 404, 12 -> 404, 20 -> 400; a case's id such
 *   as `..._must_412` is a name, not a status the contract states).
 * - A fixture that fails fails the case (the case cannot be judged, and the server refused what
 *   the contract says sets it up).
 */
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { Api, Reply } from '../../support/http';

const ROOT = resolve(__dirname, '../../..');
export const CONTRACTS_DIR = join(__dirname, 'contracts');
export const SPEC_FILE = join(ROOT, 'apps/api/openapi/lance-namespace-spec.yaml');

/** The REST binding's error table: code -> HTTP status. */
export const HTTP_STATUS_OF_CODE: Readonly<Record<number, number>> = {
  0: 406, 1: 404, 2: 409, 3: 409, 4: 404, 5: 409, 6: 404, 7: 409, 8: 404, 9: 409, 10: 404, 11: 404,
  12: 404, 13: 400, 14: 409, 15: 403, 16: 401, 17: 503, 18: 500, 19: 409, 20: 400, 21: 429, 22: 404,
  23: 409,
};

// ───────────────────────────── the contract model ─────────────────────────────

export type Request = Record<string, unknown> & { id?: string[] };

export interface ResponseAssertion {
  kind: string;
  value: unknown;
}

export interface Expectation {
  status?: 'ok';
  error_code?: number;
  error_code_alternatives?: number[];
  response_assertions?: ResponseAssertion[];
}

export interface Step {
  op: string;
  request: Request;
  expect: Expectation;
}

export interface Fixture {
  kind: 'namespace' | 'table';
  id: string[];
}

export interface ContractCase {
  id: string;
  description: string;
  file: string;
  operation: string;
  /** The operation block's flags and the case's own. */
  requires: string[];
  given: { state: string; fixtures: Fixture[] };
  steps: Step[];
}

export interface OperationBlock {
  file: string;
  operation: string;
  requires: string[];
  skipReason?: string;
  cases: ContractCase[];
}

export interface Contracts {
  version: number;
  capabilities: string[];
  blocks: OperationBlock[];
  cases: ContractCase[];
}

const STATES = ['empty_catalog', 'namespace_exists', 'namespace_with_child'] as const;

function fail(where: string, message: string): never {
  throw new Error(`contract ${where}: ${message}`);
}

function onlyKeys(where: string, value: object, allowed: string[]): void {
  const extra = Object.keys(value).filter((k) => !allowed.includes(k));
  if (extra.length) fail(where, `unknown key(s) ${extra.join(', ')}: the runner does not know what they mean`);
}

function stringList(where: string, value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) fail(where, 'expected a list of strings');
  return value as string[];
}

function expectation(where: string, raw: unknown): Expectation {
  if (!raw || typeof raw !== 'object') fail(where, 'missing expectation');
  const e = raw as Record<string, unknown>;
  onlyKeys(where, e, ['status', 'error_code', 'error_code_alternatives', 'response_assertions']);
  const hasStatus = e.status !== undefined;
  const hasCode = e.error_code !== undefined;
  if (hasStatus === hasCode) fail(where, 'an expectation states exactly one of status and error_code');
  if (hasStatus && e.status !== 'ok') fail(where, `unknown status ${JSON.stringify(e.status)}`);
  if (hasCode && !Number.isInteger(e.error_code)) fail(where, 'error_code must be an integer');
  const alternatives = e.error_code_alternatives;
  if (alternatives !== undefined && (!hasCode || !Array.isArray(alternatives) || alternatives.some((a) => !Number.isInteger(a)))) {
    fail(where, 'error_code_alternatives must be a list of integers beside an error_code');
  }
  const assertions = e.response_assertions;
  if (assertions !== undefined) {
    if (!hasStatus || !Array.isArray(assertions)) fail(where, 'response_assertions belong to a status: ok expectation');
    for (const a of assertions as ResponseAssertion[]) {
      onlyKeys(where, a, ['kind', 'value']);
      if (!ASSERTIONS[a.kind]) fail(where, `unknown response assertion kind '${a.kind}'`);
    }
  }
  return e as Expectation;
}

function request(where: string, raw: unknown): Request {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail(where, 'request must be a mapping');
  const r = raw as Request;
  if (r.id !== undefined) stringList(`${where}.id`, r.id);
  return r;
}

/** Reads main.yaml and every file it includes, checking that we understand every key. */
export function loadContracts(dir = CONTRACTS_DIR): Contracts {
  const main = parse(readFileSync(join(dir, 'main.yaml'), 'utf8')) as Record<string, unknown>;
  onlyKeys('main.yaml', main, ['version', 'capabilities', 'includes']);
  if (main.version !== 1) fail('main.yaml', `version ${String(main.version)} is not the version this runner reads (1)`);
  const capabilities = (main.capabilities as Array<{ id: string }>).map((c) => c.id);
  const blocks: OperationBlock[] = [];
  const cases: ContractCase[] = [];
  const seen = new Set<string>();
  for (const file of stringList('main.yaml includes', main.includes)) {
    const doc = parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
    onlyKeys(file, doc, ['contracts']);
    for (const rawBlock of doc.contracts as Array<Record<string, unknown>>) {
      const operation = rawBlock.operation as string;
      const where = `${file} ${operation}`;
      onlyKeys(where, rawBlock, ['operation', 'requires_capabilities', 'skip_reason', 'cases']);
      const blockRequires = stringList(`${where} requires_capabilities`, rawBlock.requires_capabilities);
      const block: OperationBlock = {
        file,
        operation,
        requires: blockRequires,
        ...(typeof rawBlock.skip_reason === 'string' ? { skipReason: rawBlock.skip_reason } : {}),
        cases: [],
      };
      for (const rawCase of (rawBlock.cases ?? []) as Array<Record<string, unknown>>) {
        const id = rawCase.id as string;
        const at = `${file} ${operation}.${id}`;
        onlyKeys(at, rawCase, ['id', 'description', 'requires_capabilities', 'given', 'when', 'then']);
        if (seen.has(id)) fail(at, 'duplicate case id');
        seen.add(id);
        const requires = [...new Set([...blockRequires, ...stringList(`${at} requires_capabilities`, rawCase.requires_capabilities)])];
        for (const flag of requires) if (!capabilities.includes(flag)) fail(at, `requires undeclared capability '${flag}'`);
        const given = rawCase.given as Record<string, unknown>;
        onlyKeys(`${at} given`, given, ['state', 'fixtures']);
        const state = given.state as string;
        if (!STATES.includes(state as (typeof STATES)[number])) fail(at, `unknown state '${state}'`);
        const fixtures = ((given.fixtures ?? []) as Array<Record<string, unknown>>).map((f) => {
          onlyKeys(`${at} fixture`, f, ['kind', 'id']);
          if (f.kind !== 'namespace' && f.kind !== 'table') fail(at, `unknown fixture kind '${String(f.kind)}'`);
          return { kind: f.kind, id: stringList(`${at} fixture id`, f.id) } as Fixture;
        });
        let steps: Step[];
        if (Array.isArray(rawCase.when)) {
          if (rawCase.then !== undefined) fail(at, 'a case with steps states its expectations per step, not in then');
          steps = (rawCase.when as Array<Record<string, unknown>>).map((s, i) => {
            onlyKeys(`${at} step ${i + 1}`, s, ['op', 'request', 'expect']);
            if (typeof s.op !== 'string') fail(at, `step ${i + 1} names no op`);
            return { op: s.op, request: request(`${at} step ${i + 1}`, s.request), expect: expectation(`${at} step ${i + 1}`, s.expect) };
          });
        } else {
          const when = rawCase.when as Record<string, unknown>;
          onlyKeys(`${at} when`, when, ['request']);
          steps = [{ op: operation, request: request(`${at} when`, when.request), expect: expectation(`${at} then`, rawCase.then) }];
        }
        const c: ContractCase = { id, description: String(rawCase.description ?? '').trim(), file, operation, requires, given: { state, fixtures }, steps };
        checkState(at, c);
        block.cases.push(c);
        cases.push(c);
      }
      blocks.push(block);
    }
  }
  return { version: 1, capabilities, blocks, cases };
}

/** The state's name must describe what the fixtures build on the empty catalog. */
function checkState(at: string, c: ContractCase): void {
  const namespaces = c.given.fixtures.filter((f) => f.kind === 'namespace');
  if (c.given.state === 'namespace_exists' && namespaces.length === 0) fail(at, 'state namespace_exists but no namespace fixture');
  if (c.given.state === 'namespace_with_child' && !namespaces.some((n) => n.id.length > 1)) fail(at, 'state namespace_with_child but no child namespace fixture');
}

// ───────────────────────────── capabilities and departures ─────────────────────────────

/** Our declaration: every flag main.yaml defines, true or false, and nothing else. */
export function loadCapabilities(file: string, contracts: Contracts): Set<string> {
  const raw = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const flags = (raw.capabilities ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(flags).filter((k) => !contracts.capabilities.includes(k));
  const missing = contracts.capabilities.filter((k) => !(k in flags));
  if (unknown.length || missing.length) {
    throw new Error(`capabilities file: ${unknown.length ? `unknown flags ${unknown.join(', ')}` : ''}${missing.length ? ` undecided flags ${missing.join(', ')}` : ''}`);
  }
  const bad = Object.entries(flags).filter(([, v]) => typeof v !== 'boolean');
  if (bad.length) throw new Error(`capabilities file: flags must be true or false: ${bad.map(([k]) => k).join(', ')}`);
  return new Set(Object.entries(flags).filter(([, v]) => v).map(([k]) => k));
}

export interface Departure {
  status: 'case-wrong' | 'server-bug';
  operation: string;
  reason: string;
}

export function loadDepartures(file: string, contracts: Contracts, declared: Set<string>): Map<string, Departure> {
  const raw = (parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, Record<string, unknown>>;
  const entries = (raw.departures ?? {}) as Record<string, Record<string, unknown>>;
  const result = new Map<string, Departure>();
  for (const [id, d] of Object.entries(entries)) {
    const c = contracts.cases.find((x) => x.id === id);
    if (!c) throw new Error(`departures: '${id}' is no case of the contracts`);
    if (!runnable(c, declared)) throw new Error(`departures: '${id}' is skipped by our capabilities, so it cannot depart`);
    if (d.status !== 'case-wrong' && d.status !== 'server-bug') throw new Error(`departures: '${id}' has status ${String(d.status)} (case-wrong or server-bug)`);
    if (d.operation !== c.operation) throw new Error(`departures: '${id}' names operation ${String(d.operation)}, the case's is ${c.operation}`);
    if (typeof d.reason !== 'string' || d.reason.trim().length < 20) throw new Error(`departures: '${id}' needs a reason`);
    result.set(id, { status: d.status, operation: c.operation, reason: d.reason.trim() });
  }
  return result;
}

export function missingCapabilities(c: ContractCase, declared: Set<string>): string[] {
  return c.requires.filter((f) => !declared.has(f));
}

export function runnable(c: ContractCase, declared: Set<string>): boolean {
  return missingCapabilities(c, declared).length === 0;
}

// ───────────────────────────── the HTTP binding, from the spec ─────────────────────────────

interface Binding {
  method: 'GET' | 'POST';
  path: string;
  pathParams: string[];
  queryParams: string[];
  body: 'none' | 'json' | 'arrow' | 'string-map';
  /** For a string-map body: the request model's field that is the body. */
  bodyField?: string;
}

export class SpecBinding {
  private readonly bindings = new Map<string, Binding>();

  constructor(specFile = SPEC_FILE) {
    const spec = parse(readFileSync(specFile, 'utf8')) as any;
    const ref = (x: any) => (x && x.$ref ? x.$ref.split('/').slice(1).reduce((a: any, k: string) => a[k], spec) : x);
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      const shared = (item.parameters ?? []).map(ref);
      for (const method of ['get', 'post'] as const) {
        const op = item[method];
        if (!op?.operationId) continue;
        const params = [...shared, ...(op.parameters ?? []).map(ref)];
        const content = ref(op.requestBody)?.content ?? {};
        let body: Binding['body'] = 'none';
        let bodyField: string | undefined;
        if (content['application/vnd.apache.arrow.stream']) body = 'arrow';
        else if (content['application/json']) {
          const schema = ref(content['application/json'].schema);
          if (schema?.type === 'object' && !schema.properties && schema.additionalProperties) {
            body = 'string-map';
            // The wrapped model's field that the bare map stands for.
            const model = spec.components.schemas[`${op.operationId}Request`];
            bodyField = Object.entries<any>(model?.properties ?? {}).find(([, p]) => p.type === 'object' && p.additionalProperties?.type === 'string' && !p.$ref)?.[0];
            if (!bodyField) throw new Error(`spec: cannot tell which field of ${op.operationId}Request its bare-map body is`);
          } else body = 'json';
        }
        this.bindings.set(op.operationId, {
          method: method.toUpperCase() as Binding['method'],
          path,
          pathParams: params.filter((p: any) => p.in === 'path').map((p: any) => p.name),
          queryParams: params.filter((p: any) => p.in === 'query' && p.name !== 'delimiter').map((p: any) => p.name),
          body,
          ...(bodyField ? { bodyField } : {}),
        });
      }
    }
  }

  has(operationId: string): boolean {
    return this.bindings.has(operationId);
  }

  /** The HTTP request for one call of `operationId` with the (placeholder-free) request model. */
  bind(operationId: string, model: Request): HttpCall {
    const b = this.bindings.get(operationId);
    if (!b) throw new Error(`the spec has no operation ${operationId}`);
    const rest: Record<string, unknown> = { ...model };
    let path = b.path;
    for (const p of b.pathParams) {
      let value: string;
      if (p === 'id') value = Api.id((model.id ?? []) as string[]);
      else {
        if (typeof model[p] !== 'string') throw new Error(`${operationId}: path parameter ${p} has no value in the request`);
        value = encodeURIComponent(model[p] as string);
        if (b.body !== 'json') delete rest[p];
      }
      path = path.replace(`{${p}}`, value);
    }
    const query = new URLSearchParams();
    for (const q of b.queryParams) {
      if (!(q in rest)) continue;
      const v = rest[q];
      query.set(q, typeof v === 'string' ? v : JSON.stringify(v));
      delete rest[q];
    }
    const data = rest.request_data;
    delete rest.request_data;
    const headers: Record<string, string> = {};
    let body: string | Buffer | undefined;
    const leftovers = (allowed: string[]) => {
      const extra = Object.keys(rest).filter((k) => !allowed.includes(k));
      if (extra.length) throw new Error(`${operationId}: request field(s) ${extra.join(', ')} have no place in its HTTP form`);
    };
    if (data !== undefined && b.body !== 'arrow') throw new Error(`${operationId}: request_data given, but the operation takes no Arrow body`);
    switch (b.body) {
      case 'none':
        leftovers(['id']);
        break;
      case 'arrow':
        leftovers(['id']);
        if (data !== 'empty') throw new Error(`${operationId}: request_data ${JSON.stringify(data)} is not one the runner knows (empty)`);
        body = emptyArrowStream();
        headers['content-type'] = 'application/vnd.apache.arrow.stream';
        break;
      case 'string-map':
        leftovers(['id', b.bodyField!]);
        body = JSON.stringify(rest[b.bodyField!] ?? {});
        headers['content-type'] = 'application/json';
        break;
      case 'json':
        body = JSON.stringify(rest);
        headers['content-type'] = 'application/json';
        break;
    }
    const qs = query.toString();
    return { method: b.method, path: qs ? `${path}?${qs}` : path, headers, body };
  }
}

export interface HttpCall {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

/** The standard zero-row body: an Arrow IPC stream over one int32 column, `id`, and no batches. */
export function emptyArrowStream(): Buffer {
  const schema = new arrow.Schema([new arrow.Field('id', new arrow.Int32(), true)]);
  return Buffer.from(arrow.tableToIPC(new arrow.Table(schema), 'stream'));
}

// ───────────────────────────── placeholders ─────────────────────────────

export function placeholderValue(name: string): string {
  const location = /^(.+)Location$/.exec(name);
  if (location) return `${placeholderValue(location[1])}.lance`;
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

export function render<T>(value: T): T {
  if (typeof value === 'string') return value.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, n: string) => placeholderValue(n)) as T;
  if (Array.isArray(value)) return value.map(render) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v)])) as T;
  return value;
}

// ───────────────────────────── judging ─────────────────────────────

type AssertionCheck = (reply: Reply, value: unknown) => string | undefined;

const listOf = (field: string) => (reply: Reply) => {
  const list = (reply.body as Record<string, unknown> | undefined)?.[field];
  return Array.isArray(list) ? (list as unknown[]) : undefined;
};

const ASSERTIONS: Record<string, AssertionCheck> = {
  namespaces_count: (reply, value) => count(listOf('namespaces')(reply), 'namespaces', value),
  namespaces_contains: (reply, value) => contains(listOf('namespaces')(reply), 'namespaces', value),
  tables_count: (reply, value) => count(listOf('tables')(reply), 'tables', value),
  tables_contains: (reply, value) => contains(listOf('tables')(reply), 'tables', value),
  count_eq: (reply, value) => {
    // CountTableRows answers a bare integer.
    const text = reply.text.trim();
    if (!/^\d+$/.test(text)) return `count_eq: the answer is not a bare integer: ${JSON.stringify(text.slice(0, 200))}`;
    return Number(text) === value ? undefined : `count_eq: expected ${String(value)}, got ${text}`;
  },
};

function count(list: unknown[] | undefined, field: string, value: unknown): string | undefined {
  if (!list) return `${field}_count: the answer has no '${field}' list`;
  return list.length === value ? undefined : `${field}_count: expected ${String(value)}, got ${list.length} (${JSON.stringify(list)})`;
}

function contains(list: unknown[] | undefined, field: string, value: unknown): string | undefined {
  if (!list) return `${field}_contains: the answer has no '${field}' list`;
  return list.includes(value) ? undefined : `${field}_contains: ${JSON.stringify(value)} is not in ${JSON.stringify(list)}`;
}

/** Undefined when the reply meets the expectation, else what is wrong. */
export function judge(reply: Reply, e: Expectation): string | undefined {
  if (e.status === 'ok') {
    if (reply.status < 200 || reply.status > 299) return `expected success, got ${describeReply(reply)}`;
    const problems = (e.response_assertions ?? []).map((a) => ASSERTIONS[a.kind](reply, render(a.value))).filter(Boolean);
    return problems.length ? problems.join('; ') : undefined;
  }
  const accepted = [e.error_code!, ...(e.error_code_alternatives ?? [])];
  const want = accepted.map((c) => `code ${c} (HTTP ${HTTP_STATUS_OF_CODE[c]})`).join(' or ');
  const code = (reply.body as Record<string, unknown> | undefined)?.code;
  if (!Number.isInteger(code)) return `expected ${want}, got ${describeReply(reply)}`;
  if (!accepted.includes(code as number)) return `expected ${want}, got ${describeReply(reply)}`;
  if (reply.status !== HTTP_STATUS_OF_CODE[code as number]) return `expected ${want}: code ${String(code)} came with HTTP ${reply.status}`;
  return undefined;
}

export function describeReply(reply: Reply): string {
  const body = reply.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && 'code' in body) {
    return `HTTP ${reply.status} code ${String(body.code)}: ${String(body.error ?? '')}`.slice(0, 400);
  }
  return `HTTP ${reply.status} ${reply.text.slice(0, 200)}`;
}

// ───────────────────────────── running ─────────────────────────────

export interface StepRecord {
  op: string;
  call: string;
  reply: { status: number; code?: number; error?: string };
  problem?: string;
}

export interface CaseOutcome {
  id: string;
  operation: string;
  database: string;
  passed: boolean;
  /** Set when a fixture could not be built. */
  fixtureProblem?: string;
  steps: StepRecord[];
}

export class CtsRunner {
  private counter = 0;
  private readonly run = Math.random().toString(36).slice(2, 8);

  constructor(
    private readonly url: string,
    private readonly binding = new SpecBinding(),
  ) {}

  async runCase(c: ContractCase): Promise<CaseOutcome> {
    const database = `cts_${++this.counter}_${this.run}`;
    const api = new Api(this.url, { 'x-lance-database': database });
    const outcome: CaseOutcome = { id: c.id, operation: c.operation, database, passed: false, steps: [] };
    for (const f of c.given.fixtures) {
      const op = f.kind === 'namespace' ? 'CreateNamespace' : 'CreateTable';
      const model: Request = f.kind === 'namespace' ? { id: render(f.id) } : { id: render(f.id), request_data: 'empty' };
      const reply = await this.send(api, op, model);
      if (reply.status < 200 || reply.status > 299) {
        outcome.fixtureProblem = `fixture ${f.kind} ${JSON.stringify(render(f.id))} (${op}) failed: ${describeReply(reply)}`;
        return outcome;
      }
    }
    let passed = true;
    for (const step of c.steps) {
      const model = render(step.request);
      const call = this.binding.bind(step.op, model);
      const reply = await this.send(api, step.op, model);
      const problem = judge(reply, step.expect);
      const body = reply.body as Record<string, unknown> | undefined;
      outcome.steps.push({
        op: step.op,
        call: `${call.method} ${call.path}${typeof call.body === 'string' ? ` ${call.body}` : call.body ? ` <${call.body.length} bytes Arrow>` : ''}`,
        reply: {
          status: reply.status,
          ...(body && typeof body === 'object' && Number.isInteger(body.code) ? { code: body.code as number, error: String(body.error ?? '') } : {}),
        },
        ...(problem ? { problem } : {}),
      });
      if (problem) passed = false;
    }
    outcome.passed = passed;
    return outcome;
  }

  private send(api: Api, op: string, model: Request): Promise<Reply> {
    const call = this.binding.bind(op, model);
    return api.send(call.method, call.path, call.body, call.headers);
  }
}

/** A readable account of a case's outcome, for a failing test's message. */
export function explain(c: ContractCase, o: CaseOutcome): string {
  const lines = [`${c.file} ${c.operation}.${c.id} (database ${o.database})`, `  ${c.description.replace(/\s+/g, ' ')}`];
  if (o.fixtureProblem) lines.push(`  ${o.fixtureProblem}`);
  for (const s of o.steps) {
    lines.push(`  ${s.op}: ${s.call}`);
    lines.push(`    -> HTTP ${s.reply.status}${s.reply.code !== undefined ? ` code ${s.reply.code}: ${s.reply.error}` : ''}`);
    if (s.problem) lines.push(`    FAILS: ${s.problem}`);
  }
  return lines.join('\n');
}
