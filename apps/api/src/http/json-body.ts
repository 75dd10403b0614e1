import { invalidInput } from '@app/catalog';

/**
 * Reads a JSON request body. JSON.parse turns a number too large for a double (`1e309`) into
 * Infinity, which no field of the protocol means and which Lance would take as a vector component
 * or a bound; such a body is refused, as is one nested deeper than `maxDepth` (JSON_MAX_DEPTH),
 * which every recursive reader after this one (the schemas, the full-text query builder, Lance)
 * would follow, and one with an array longer than `maxArrayItems` (JSON_MAX_ARRAY_ITEMS). One walk
 * over the parsed values, no second pass over the text.
 */
export function parseJsonBody(text: string, limits: { maxDepth: number; maxArrayItems: number }): unknown {
  const value: unknown = JSON.parse(text);
  if (typeof value === 'object' && value !== null) walk(value, 1, limits);
  else if (typeof value === 'number' && !Number.isFinite(value)) throw notFinite();
  return value;
}

function walk(value: object, depth: number, limits: { maxDepth: number; maxArrayItems: number }): void {
  if (depth > limits.maxDepth) throw invalidInput(`the request body nests arrays and objects deeper than ${limits.maxDepth} (JSON_MAX_DEPTH)`);
  if (Array.isArray(value)) {
    if (value.length > limits.maxArrayItems) {
      throw invalidInput(`the request body holds an array of ${value.length} items; at most ${limits.maxArrayItems} are allowed (JSON_MAX_ARRAY_ITEMS)`);
    }
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) throw notFinite();
      } else if (typeof v === 'object' && v !== null) walk(v, depth + 1, limits);
    }
    return;
  }
  for (const key in value) {
    const v: unknown = (value as Record<string, unknown>)[key];
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw notFinite();
    } else if (typeof v === 'object' && v !== null) walk(v, depth + 1, limits);
  }
}

function notFinite(): Error {
  return invalidInput('the request body holds a number too large to represent (such as 1e309): every number must be finite');
}
