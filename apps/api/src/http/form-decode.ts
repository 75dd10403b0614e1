import { invalidInput } from '@app/catalog';

/** Clients form-urlencode ids: a space arrives as '+', so '+' must be decoded before percent-escapes. */
export function decodeFormComponent(raw: string): string {
  // Most ids are plain names: nothing to decode.
  if (!raw.includes('%') && !raw.includes('+')) return raw;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw invalidInput(`'${raw}' is not validly percent-encoded`);
  }
}
