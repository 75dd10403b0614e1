import { invalidInput } from '@app/catalog';
import { z } from 'zod';

const MAX_LENGTH = 1024 * 1024;
const MAX_NESTING = 200;

/**
 * Filters are handed to Lance's SQL parser, which reads one expression and would silently ignore
 * whatever follows a `;`. Refuse what cannot be one expression, and nesting deep enough to make
 * the parser recurse without bound, before Lance sees it.
 */
export function checkSqlExpression(text: string, what: string): string {
  if (text.length > MAX_LENGTH) throw invalidInput(`${what} is longer than ${MAX_LENGTH} characters`);
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = text[i + 1] === quote ? (i++, quote) : undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === ';') throw invalidInput(`${what} must be a single SQL expression: found ';' at offset ${i}`);
    else if (c === '\u0000') throw invalidInput(`${what} contains a NUL character`);
    else if (c === '(' && ++depth > MAX_NESTING) throw invalidInput(`${what} nests parentheses deeper than ${MAX_NESTING}`);
    else if (c === ')') depth--;
  }
  return text;
}

/** A zod string that is a usable filter; its problem is answered 400 code 13 like any bad field. */
export const sqlExpression = (what: string) =>
  z.string().superRefine((text, ctx) => {
    try {
      checkSqlExpression(text, what);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  });
