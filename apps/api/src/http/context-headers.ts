import { RESERVED_KEYS, invalidInput } from '@app/catalog';
import type { IncomingHttpHeaders } from 'node:http';

const CTX_HEADER_PREFIX = 'x-lance-ctx-';

/**
 * What is wrong with a request's `x-lance-ctx-*` headers, or undefined. They become context keys
 * (recorded with every event the request makes) and are echoed back, so they are held to
 * CONTEXT_MAX_BYTES (`bytes`: header names and values, as counted while echoing) and to keys a map
 * can hold. Header values are latin-1 on the wire: their length is their size.
 */
export function contextHeadersProblem(headers: IncomingHttpHeaders, bytes: number, maxBytes: number): Error | undefined {
  if (bytes > maxBytes) return invalidInput(`the x-lance-ctx-* headers hold more than ${maxBytes} bytes (CONTEXT_MAX_BYTES)`);
  for (const name in headers) {
    if (name.startsWith(CTX_HEADER_PREFIX) && RESERVED_KEYS.has(name.slice(CTX_HEADER_PREFIX.length))) {
      return invalidInput(`header '${name}': the context key '${name.slice(CTX_HEADER_PREFIX.length)}' is reserved; use another name`);
    }
  }
  return undefined;
}
