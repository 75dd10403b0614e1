import { arrowSeeds, mutateArrow } from './arrow-mutations';
import { mutateJson, toJson } from './json-mutations';
import { Rng } from './rng';
import { Fixture, QUERY_NAMES, Seed, seeds } from './seeds';
import { sqlExpression, sqlValue } from './sql';

export interface Operation {
  method: string;
  /** As /openapi.json lists it: `/v1/table/{id}/insert`. */
  template: string;
}

export type CaseKind = 'valid' | 'arrow' | 'json' | 'sql' | 'id' | 'query' | 'header';

/** One request of a run: everything needed to send it again. */
export interface FuzzCase {
  index: number;
  /** `METHOD template`. */
  operation: string;
  kind: CaseKind;
  /** What was mutated, in words. */
  note: string;
  method: string;
  /** Path and query string, as sent. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
}

export const ARROW_CONTENT_TYPE = 'application/vnd.apache.arrow.stream';

/** How many terms a generated SQL expression may have at case `index`: expressions grow as a run goes on. */
export const sqlBudget = (index: number) => Math.min(60_000, 20 + index * 100);

/**
 * The requests of a run. Case `index` goes to the operation whose turn it is (every route takes
 * turns, so each is covered within a round of about a hundred cases) and is drawn from a generator seeded by the run's seed and the index alone: any case can
 * be made again from those two numbers, without the ones before it.
 */
export class CaseGenerator {
  private readonly seeds: Record<string, Seed>;
  private readonly arrows = arrowSeeds();
  private order?: Operation[];

  constructor(
    readonly seed: number,
    readonly operations: readonly Operation[],
    fixture: Fixture,
  ) {
    this.seeds = seeds(fixture);
  }

  /** Served operations with no valid request written for them: they get an empty one. */
  unseeded(): string[] {
    return this.operations.map(key).filter((k) => !this.seeds[k]);
  }

  /**
   * The order operations take turns in: each once, those taking Arrow bodies four times more and
   * those taking SQL twice more, since their inputs reach Lance.
   */
  private schedule(): readonly Operation[] {
    if (this.order) return this.order;
    const rounds = this.operations.map((o) => {
      const s = this.seeds[key(o)];
      return { o, turns: 1 + (s?.arrow || s?.arrowField ? 4 : 0) + (s?.sql ? 2 : 0) };
    });
    const order: Operation[] = [];
    for (let round = 0; round < 7; round++) for (const { o, turns } of rounds) if (round < turns) order.push(o);
    return (this.order = order);
  }

  caseAt(index: number): FuzzCase {
    const rng = Rng.forCase(this.seed, index);
    const order = this.schedule();
    const operation = order[index % order.length];
    const seed: Seed = this.seeds[key(operation)] ?? { id: 'fz', json: operation.method === 'POST' ? {} : undefined };
    const kinds: Array<[number, CaseKind]> = [
      [0.5, 'valid'],
      [1.5, 'query'],
      [1, 'header'],
    ];
    if (operation.template.includes('{')) kinds.push([2, 'id']);
    if (seed.arrow || seed.arrowField) kinds.push([6, 'arrow']);
    if (seed.json !== undefined) kinds.push([4, 'json']);
    if (seed.sql) kinds.push([5, 'sql']);
    const kind = rng.weighted(kinds);

    let id = seed.id ?? '';
    let query: Array<[string, string]> = Object.entries(seed.query ?? {}).map(([k, v]) => [k, encodeURIComponent(v)]);
    let rawQuery = '';
    const headers: Record<string, string> = { ...seed.headers };
    let json = seed.json === undefined ? undefined : structuredClone(seed.json);
    let body: Buffer | string | undefined;
    let note = 'unchanged';

    const arrowBody = () => (rng.chance(0.5) ? this.arrows[0] : rng.pick(this.arrows));
    switch (kind) {
      case 'arrow': {
        const other = rng.pick(this.arrows);
        if (seed.arrow) {
          const m = mutateArrow(rng, arrowBody(), other);
          body = m.bytes;
          note = m.note;
        } else {
          const field = seed.arrowField!;
          const m = mutateArrow(rng, Buffer.from((json as Record<string, string>)[field], 'base64'), other);
          (json as Record<string, string>)[field] = base64Variant(rng, m.bytes);
          note = `${field}: ${m.note}`;
        }
        break;
      }
      case 'json': {
        const m = mutateJson(rng, json);
        json = m.body;
        note = m.note;
        break;
      }
      case 'sql': {
        const slot = rng.pick(seed.sql!);
        const expression = slot.kind === 'predicate' ? sqlExpression(rng, sqlBudget(index)) : sqlValue(rng, sqlBudget(index));
        const q = { ...seed.query };
        slot.put(json, q, expression);
        query = Object.entries(q).map(([k, v]) => [k, encodeURIComponent(v)]);
        note = `${slot.what} = ${describeSql(expression)}`;
        break;
      }
      case 'id': {
        const m = mutateId(rng, id);
        id = m.id;
        note = m.note;
        break;
      }
      case 'query': {
        const m = mutateQuery(rng, query);
        query = m.query;
        rawQuery = m.raw;
        note = m.note;
        break;
      }
      case 'header': {
        const m = mutateHeaders(rng, headers, !!seed.arrow);
        note = m.note;
        break;
      }
    }
    if (body === undefined && seed.arrow) body = arrowBody();
    if (body === undefined && json !== undefined) body = toJson(json);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = seed.arrow ? ARROW_CONTENT_TYPE : 'application/json';
    }
    const filled = operation.template.replace('{id}', id).replace('{table_name}', id).replace('{index_name}', seed.indexName ?? 'idx');
    const queryString = [...query.map(([k, v]) => `${k}=${v}`), ...(rawQuery ? [rawQuery] : [])].join('&');
    return {
      index,
      operation: key(operation),
      kind,
      note,
      method: operation.method,
      path: queryString ? `${filled}?${queryString}` : filled,
      headers,
      body,
    };
  }
}

const key = (o: Operation) => `${o.method} ${o.template}`;

function describeSql(expression: string): string {
  if (expression.length <= 160) return JSON.stringify(expression);
  return `${JSON.stringify(expression.slice(0, 120))}... (${expression.length} characters)`;
}

function base64Variant(rng: Rng, bytes: Buffer): string {
  const b64 = bytes.toString('base64');
  return rng.weighted<() => string>([
    [8, () => b64],
    [1, () => bytes.toString('base64url')],
    [1, () => b64.replace(/=+$/, '')],
    [1, () => `${b64.slice(0, b64.length >> 1)}\n ${b64.slice(b64.length >> 1)}`],
    [1, () => `${b64}!!!`],
  ])();
}

const ID_TOKENS = [
  '%24', '$', '..', '%2E%2E', '/', '%2F', '\\', '%5C', '%00', '%', '%2', '%ZZ', '%C0%AE', '%EF%BC%8F', '+', '%20', '%2B', '%F0%9F%8D%8E',
  '%C7%85', '%E2%80%AE', '%01', '%1B', '%7F', '*', '%3F', '%23', '%25', '%FF', '%ED%A0%80', '.', '~', ':', '%3A', '@', '%0A',
];

function mutateId(rng: Rng, id: string): { id: string; note: string } {
  return rng.weighted<() => { id: string; note: string }>([
    [4, () => {
      const token = rng.pick(ID_TOKENS).repeat(rng.size(1, 8));
      const at = rng.int(0, id.length);
      return { id: id.slice(0, at) + token + id.slice(at), note: `id with ${token.slice(0, 40)} at ${at}` };
    }],
    [2, () => {
      const n = rng.size(100, 200_000);
      return { id: rng.chance(0.5) ? `fz%24${'a'.repeat(n)}` : Array(Math.ceil(n / 4)).fill('a').join('%24'), note: `id of about ${n} characters` };
    }],
    [1, () => ({ id: '', note: 'empty id' })],
    [1, () => ({ id: id.toUpperCase(), note: 'id upper-cased' })],
    [1, () => ({ id: encodeURIComponent(decodeURIComponent(id.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'))), note: 'id encoded twice' })],
    [1, () => ({ id: `${id}%24${id}`, note: 'id repeated as a part' })],
    [1, () => {
      const cut = rng.int(0, id.length);
      return { id: id.slice(0, cut), note: `id cut to ${cut} characters` };
    }],
  ])();
}

const QUERY_VALUES = [
  '', '-1', '0', '1', '2', '1e309', 'NaN', 'Infinity', 'true', 'TRUE', 'yes', 'null', 'undefined', '%00', '%', '%ZZ', '%24', '..',
  '9999999999999999999999', '-9223372036854775808', '1.5', '0x10', '%5B%5D', '%7B%7D', '%7B%22a%22%3A1%7D', '%F0%9F%8D%8E', 'append', 'overwrite',
  'create', 'exist_ok', 'CREATE', 'id', 'id%2Cid', 'nosuch', '%27', '%22',
];

function mutateQuery(rng: Rng, query: Array<[string, string]>): { query: Array<[string, string]>; raw: string; note: string } {
  const out = [...query];
  const notes: string[] = [];
  let raw = '';
  for (let i = rng.size(1, 3); i > 0; i--) {
    rng.weighted<() => void>([
      [5, () => {
        const name = rng.chance(0.5) && out.length ? rng.pick(out)[0] : rng.pick(QUERY_NAMES);
        const value = rng.chance(0.1) ? 'x'.repeat(rng.size(100, 100_000)) : rng.pick(QUERY_VALUES);
        const at = out.findIndex(([k]) => k === name);
        if (at >= 0) out[at] = [name, value];
        else out.push([name, value]);
        notes.push(`${name}=${value.slice(0, 40)}`);
      }],
      [2, () => {
        const name = out.length ? rng.pick(out)[0] : rng.pick(QUERY_NAMES);
        out.push([name, rng.pick(QUERY_VALUES)]);
        notes.push(`${name} twice`);
      }],
      [1, () => {
        if (!out.length) return;
        const [name] = out.splice(rng.int(0, out.length - 1), 1)[0];
        notes.push(`no ${name}`);
      }],
      [2, () => {
        raw = rng.pick([
          '&&&', '=x', 'a[b]=1', 'limit[]=1', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', '%', '%%%', '?', 'a=1=2',
          `${'x'.repeat(rng.size(100, 50_000))}=1`, Array.from({ length: rng.size(10, 5000) }, (_, j) => `p${j}=${j}`).join('&'),
        ]);
        notes.push(`raw ${JSON.stringify(raw.slice(0, 40))}${raw.length > 40 ? ` (${raw.length} characters)` : ''}`);
      }],
    ])();
  }
  return { query: out, raw, note: `query: ${notes.join(', ')}` };
}

function mutateHeaders(rng: Rng, headers: Record<string, string>, arrow: boolean): { note: string } {
  const [name, value] = rng.weighted<() => [string, string]>([
    [3, () => ['content-type', rng.pick([
      `${ARROW_CONTENT_TYPE}; charset=utf-8`, 'application/vnd.apache.arrow.file', arrow ? 'application/json' : ARROW_CONTENT_TYPE, 'text/plain',
      'application/octet-stream', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', `${ARROW_CONTENT_TYPE}, application/json`, 'x',
    ])]],
    [2, () => ['x-lance-table-properties', rng.pick(['{', '[]', '{"a":1}', '{"__proto__":{"x":"y"}}', `{"k":"${'v'.repeat(rng.size(10, 100_000))}"}`, 'null', '"s"'])]],
    [1, () => ['x-lance-table-location', rng.pick(['/etc', '../../x', 'file:///tmp/x.lance', 's3://b/x', '', 'memory://x', 'x'.repeat(5000)])]],
    [2, () => ['x-lance-database', rng.pick(['', '..', 'a/b', 'x'.repeat(65), 'default', 'scratchdb', 'DEFAULT', 'a b', '%2E%2E'])]],
    [1, () => ['x-lancedb-min-timestamp', rng.pick(['', 'yesterday', '9999-12-31T23:59:59Z', '1970-01-01T00:00:00Z', '-1', 'x'.repeat(1000)])]],
    [1, () => [`x-lance-ctx-${rng.pick(['a', 'branch', 'version', '__proto__', 'x'.repeat(200)])}`, rng.pick(['', 'v', '{}', 'x'.repeat(5000)])]],
    [1, () => ['content-encoding', rng.pick(['gzip', 'br', 'deflate', 'identity', 'x'])]],
    [1, () => ['x-api-key', rng.pick(['', 'x', 'x'.repeat(10_000)])]],
    [1, () => ['authorization', rng.pick(['Bearer ', 'Bearer x.y.z', 'Basic Og==', 'Bearer ' + 'a'.repeat(10_000)])]],
  ])();
  headers[name] = value;
  return { note: `header ${name}: ${JSON.stringify(value.slice(0, 40))}${value.length > 40 ? ` (${value.length} characters)` : ''}` };
}
