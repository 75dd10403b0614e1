import { invalidInput } from './errors';

/**
 * Keys that name parts of every JavaScript object. As map keys they are dropped or misread by
 * whatever copies the map into a plain object (a `__proto__` entry silently disappears, a
 * `constructor` entry looks present in every map), so they are refused rather than lost.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** How large one property map may grow: every DescribeTable answers it, every snapshot keeps it. */
export interface PropertyLimits {
  maxCount: number;
  maxBytes: number;
}

export function checkKey(key: string, what: string): string {
  if (RESERVED_KEYS.has(key)) throw invalidInput(`${what}: the key '${key}' is reserved; use another name`);
  return key;
}

/** The settings a refusal names, so the operator knows what to raise. */
export interface LimitNames {
  count: string;
  bytes: string;
}

const PROPERTY_LIMIT_NAMES: LimitNames = { count: 'PROPERTIES_MAX_COUNT', bytes: 'PROPERTIES_MAX_BYTES' };

/** What is wrong with a string map, or undefined: a reserved key, too many entries, too many bytes. */
export function propertyMapProblem(map: Record<string, unknown>, limits: PropertyLimits, names: LimitNames = PROPERTY_LIMIT_NAMES): string | undefined {
  let count = 0;
  let bytes = 0;
  for (const key in map) {
    if (!Object.prototype.hasOwnProperty.call(map, key)) continue;
    if (RESERVED_KEYS.has(key)) return `the key '${key}' is reserved; use another name`;
    if (++count > limits.maxCount) return `more than ${limits.maxCount} entries (${names.count})`;
    const value = map[key];
    bytes += utf8Length(key) + (typeof value === 'string' ? utf8Length(value) : 0);
    if (bytes > limits.maxBytes) return `more than ${limits.maxBytes} bytes of keys and values (${names.bytes})`;
  }
  return undefined;
}

/** The size of a map after a change, for changes that can only be judged on the whole (AlterTransaction). */
export function propertyMapSize(map: Record<string, string>): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  for (const key of Object.keys(map)) {
    count++;
    bytes += utf8Length(key) + utf8Length(map[key]);
  }
  return { count, bytes };
}

/** UTF-8 length without encoding the text. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: two UTF-16 units, four bytes.
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}
