import { invalidInput } from './errors';

/** Mode strings are case-insensitive and come in PascalCase or snake_case: `ExistOk`, `exist_ok`. */
export function parseMode<T extends string>(value: unknown, allowed: readonly T[], what: string, fallback: T): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw invalidInput(`${what} must be a string, one of ${allowed.join(', ')}`);
  const normalised = value.replace(/_/g, '').toLowerCase();
  const found = allowed.find((a) => a.toLowerCase() === normalised);
  if (!found) throw invalidInput(`unknown ${what} '${value}'; expected one of ${allowed.join(', ')}`);
  return found;
}
