import { Rng } from './rng';

/**
 * Structure-level mutations of a valid JSON body. The mutated value is written by `toJson`, which
 * also writes what JSON.stringify cannot: numbers such as 1e309 or 20 digits kept as typed, and an
 * object's key twice.
 */
export class RawJson {
  constructor(readonly text: string) {}
}
export class DuplicateKeys {
  constructor(readonly entries: Array<[string, unknown]>) {}
}

export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof DuplicateKeys) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const HUGE_NUMBERS = [
  '1e308', '-1e308', '1e309', '-1e309', '1e-400', '-0', '0.1', '-1', '-2147483649', '2147483648', '4294967296',
  '9007199254740993', '9223372036854775807', '9223372036854775808', '18446744073709551616', '123456789012345678901234567890', '1.5', '1E2',
];
const ODD_STRINGS = [
  '', ' ', 'NaN', 'Infinity', '-Infinity', '1e309', '0x10', ' 1', 'null', 'true', '[]', '{}', '$', '%24', '..', '../..', '/', '\\',
  '\u0000', '\ud800', '\udfff\ud800', '\u202e\u202d', 'é', 'e\u0301', '\ufeff', '🍎🍏', '𝕏'.repeat(100), 'ǅ', 'İ', '\r\n', '%s%n%x',
  "' OR '1'='1", '${jndi:ldap://x}', '__proto__', 'constructor', 'a'.repeat(256),
];
const SPECIAL_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', ''];

type Path = Array<string | number>;

const MAX_BODY = 16 * 1024 * 1024;

/** Every place in the value: [] is the body itself. */
function paths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (out.length > 2000) return out;
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value && typeof value === 'object' && !(value instanceof RawJson) && !(value instanceof DuplicateKeys)) {
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  }
  return out;
}

function get(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], value);
}

/** The value with the node at `path` replaced (`undefined` removes it). */
function set(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    const copy = [...value];
    if (rest.length === 0 && replacement === undefined) copy.splice(head as number, 1);
    else copy[head as number] = set(copy[head as number], rest, replacement);
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  if (rest.length === 0 && replacement === undefined) delete copy[head as string];
  else copy[head as string] = set(copy[head as string], rest, replacement);
  return copy;
}

function anyValue(rng: Rng, depth = 0): unknown {
  return rng.weighted<() => unknown>([
    [3, () => null],
    [3, () => new RawJson(rng.pick(HUGE_NUMBERS))],
    [3, () => rng.pick(ODD_STRINGS)],
    [2, () => rng.chance(0.5)],
    [2, () => rng.int(-5, 5)],
    [1, () => (depth > 2 ? [] : Array.from({ length: rng.int(0, 3) }, () => anyValue(rng, depth + 1)))],
    [1, () => (depth > 2 ? {} : Object.fromEntries(Array.from({ length: rng.int(0, 3) }, (_, i) => [rng.pick([...SPECIAL_KEYS, `k${i}`]), anyValue(rng, depth + 1)])))],
  ])();
}

/** A value of another type than `v`. */
function swapType(rng: Rng, v: unknown): unknown {
  const choices: Array<() => unknown> = [
    () => (typeof v === 'string' ? Number(v.length) : String(v)),
    () => (Array.isArray(v) ? (v[0] ?? {}) : [v]),
    () => (v && typeof v === 'object' ? JSON.stringify(v) : { value: v }),
    () => typeof v !== 'boolean' && rng.chance(0.5),
    () => null,
  ];
  return rng.pick(choices)();
}

function wrapDeep(rng: Rng, v: unknown, depth: number): RawJson {
  const inner = toJson(v);
  return rng.chance(0.5) ? new RawJson(`${'['.repeat(depth)}${inner}${']'.repeat(depth)}`) : new RawJson(`${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`);
}

type Mutation = (rng: Rng, body: unknown) => { body: unknown; note: string };

const at = (rng: Rng, body: unknown): Path => rng.pick(paths(body));
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson) && !(v instanceof DuplicateKeys);
/** An object in the body; none, and the body itself becomes one holding it. */
const objectAt = (rng: Rng, body: unknown): { body: unknown; path: Path } => {
  const objects = paths(body).filter((p) => isObject(get(body, p)));
  return objects.length ? { body, path: rng.pick(objects) } : { body: { value: body }, path: [] };
};
const where = (p: Path) => (p.length ? p.join('.') : 'body');

/** A mutation that replaces one node: `make` answers the new value and what it is, in words. */
const replacing =
  (make: (rng: Rng, old: unknown) => [unknown, string]): Mutation =>
  (rng, body) => {
    const p = at(rng, body);
    const [value, what] = make(rng, get(body, p));
    return { body: set(body, p, value), note: `${where(p)} = ${what}` };
  };

const nulled = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(nulled) : isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nulled(x)])) : null;

const MUTATIONS: ReadonlyArray<readonly [number, Mutation]> = [
  [4, (rng, body) => {
    const p = at(rng, body);
    return p.length ? { body: set(body, p, undefined), note: `drop ${where(p)}` } : { body: new RawJson(''), note: 'no body' };
  }],
  [3, (rng, start) => {
    const { body, path: p } = objectAt(rng, start);
    const entries = Object.entries(get(body, p) as Record<string, unknown>);
    if (!entries.length) return { body, note: 'nothing to duplicate' };
    const [k, v] = rng.pick(entries);
    return { body: set(body, p, new DuplicateKeys([...entries, [k, rng.chance(0.5) ? v : anyValue(rng)]])), note: `duplicate key ${where([...p, k])}` };
  }],
  [2, (rng, start) => {
    const { body, path: p } = objectAt(rng, start);
    const key = rng.pick(SPECIAL_KEYS);
    const value = rng.chance(0.5) ? { polluted: 'yes', id: ['x'] } : anyValue(rng);
    return { body: set(body, p, new DuplicateKeys([[key, value], ...Object.entries(get(body, p) as Record<string, unknown>)])), note: `key ${JSON.stringify(key)} in ${where(p)}` };
  }],
  [2, (rng, start) => {
    const { body, path: p } = objectAt(rng, start);
    const k = rng.pick(['extra', 'id', 'context', 'identity', 'branch', 'version', 'mode']);
    return { body: set(body, [...p, k], anyValue(rng)), note: `add ${where([...p, k])}` };
  }],
  [5, replacing((rng, old) => [swapType(rng, old), 'another type'])],
  [5, replacing((rng) => {
    const n = rng.pick(HUGE_NUMBERS);
    return [new RawJson(n), n];
  })],
  [2, replacing((rng) => {
    const n = rng.int(-3, -1) * rng.pick([1, 1000, 2 ** 31, 2 ** 53]);
    return [n, String(n)];
  })],
  [4, replacing((rng) => {
    const text = rng.pick(ODD_STRINGS);
    return [text, `odd string ${JSON.stringify(text.slice(0, 20))}`];
  })],
  [2, replacing((rng) => {
    const n = rng.size(1000, 2_000_000);
    return [rng.pick(['x', 'é', '🍎', '\\', "'"]).repeat(n), `a string of ${n}`];
  })],
  [2, replacing((rng, old) => {
    const depth = rng.size(10, 20_000);
    return [wrapDeep(rng, old, depth), `itself nested ${depth} deep`];
  })],
  [2, replacing((rng, old) => {
    const element = toJson(rng.chance(0.5) ? (Array.isArray(old) ? (old[0] ?? 0) : old) : rng.int(0, 9));
    // Kept under the server's default body limit, so the array itself is what is read.
    const length = Math.min(rng.size(100, 500_000), Math.floor(MAX_BODY / (element.length + 1)));
    return [new RawJson(`[${Array(length).fill(element).join(',')}]`), `an array of ${length}`];
  })],
  [3, replacing(() => [null, 'null'])],
  [1, (_rng, body) => ({ body: nulled(body), note: 'every leaf null' })],
];

/** One to three structure mutations of a valid body, and what they were. */
export function mutateJson(rng: Rng, body: unknown): { body: unknown; note: string } {
  let current = body;
  const notes: string[] = [];
  for (let i = rng.size(1, 3); i > 0; i--) {
    const m = rng.weighted(MUTATIONS)(rng, current);
    current = m.body;
    notes.push(m.note);
  }
  return { body: current, note: notes.join('; ') };
}
