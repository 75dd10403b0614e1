import { CatalogError, ErrorCode, invalidInput } from './errors';

/** An object identifier: the path of names from the root namespace. The root is []. */
export type ObjectId = readonly string[];

export const DEFAULT_DELIMITER = '$';

/** A map key for an id. NUL cannot appear in a valid name, so the join is unambiguous. */
export function keyOf(id: ObjectId): string {
  return id.join('\u0000');
}

export function idFromKey(key: string): string[] {
  return key === '' ? [] : key.split('\u0000');
}

export function parentOf(id: ObjectId): string[] {
  return id.slice(0, -1);
}

export function nameOf(id: ObjectId): string {
  return id[id.length - 1];
}

export function displayId(id: ObjectId, delimiter = DEFAULT_DELIMITER): string {
  return id.length === 0 ? delimiter : id.join(delimiter);
}

export function isPrefix(prefix: ObjectId, id: ObjectId): boolean {
  if (prefix.length > id.length) return false;
  return prefix.every((part, i) => id[i] === part);
}

export function sameId(a: ObjectId, b: ObjectId): boolean {
  return a.length === b.length && isPrefix(a, b);
}

/** The longest name of anything: namespace and table id parts, columns, and names looked up. */
export const MAX_NAME_LENGTH = 1024;

/**
 * A name must be addressable through the REST binding: a name holding the delimiter would be
 * split into two parts by every client, and control characters cannot travel in a header or a path.
 */
export function validateName(name: unknown, what: string, delimiter = DEFAULT_DELIMITER): string {
  if (typeof name !== 'string') throw invalidInput(`${what} must be a string`);
  if (name.length === 0) throw invalidInput(`${what} must not be empty`);
  if (name.length > MAX_NAME_LENGTH) throw invalidInput(`${what} is longer than ${MAX_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalidInput(`${what} '${printable(name)}' contains a control character`);
  // Names end up in paths, logs and other tools' URLs: nothing that reads as a path step there.
  if (name === '.' || name === '..') throw invalidInput(`${what} '${name}' is not a usable name`);
  if (/[/\\]/.test(name)) throw invalidInput(`${what} '${name}' contains a slash`, 'Names may not contain / or \\; use the delimiter to nest namespaces.');
  if (name.includes(delimiter) || name.includes(DEFAULT_DELIMITER)) {
    throw invalidInput(
      `${what} '${name}' contains the delimiter '${name.includes(delimiter) ? delimiter : DEFAULT_DELIMITER}'`,
      'A name holding the id delimiter cannot be addressed through the REST binding; choose another name.',
    );
  }
  return name;
}

export function validateId(id: readonly unknown[], what: string, delimiter = DEFAULT_DELIMITER): string[] {
  return id.map((part, i) => validateName(part, `${what} part ${i + 1}`, delimiter));
}

/** A table id needs a name: the root namespace is not a table. */
export function requireTableId(id: ObjectId): ObjectId {
  if (id.length === 0) throw new CatalogError(ErrorCode.InvalidInput, 'a table id needs at least a table name');
  return id;
}

function printable(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** A database's name: what a header, a key's list, a stream and a warehouse folder may carry. */
export const DATABASE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
