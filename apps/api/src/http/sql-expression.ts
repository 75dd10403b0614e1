import { invalidInput } from '@app/catalog';
import type { InputLimits } from '@app/config';
import { z } from 'zod';
import { inputLimits } from './input-limits';

export type SqlLimits = InputLimits['sqlExpression'];

/**
 * Functions whose output is as large as a number they are given, times their input: a tiny
 * expression such as `repeat(s, 2500000)` made Lance hold gigabytes for a few rows. Their count
 * (the argument at each listed position) must be an integer literal no larger than
 * SQL_EXPRESSION_MAX_REPEAT, and none may be nested in another's arguments (sizes would multiply).
 */
const SIZING: ReadonlyMap<string, readonly number[]> = new Map([
  ['repeat', [1]],
  ['lpad', [1]],
  ['rpad', [1]],
  ['array_repeat', [1]],
  ['list_repeat', [1]],
  ['array_resize', [1]],
  ['list_resize', [1]],
  ['range', [0, 1, 2]],
  ['generate_series', [0, 1, 2]],
]);
/**
 * Functions whose output may be larger than their input by a factor of their own: nested in one
 * another, or in a sizing function, they multiply (ten nested `replace(x, 'a', 'aa')` are 1024
 * times x). A `replace` whose replacement is a literal no longer than the non-empty literal it
 * replaces, and a `regexp_replace` with the empty replacement, cannot grow and are left out.
 */
const GROWING = new Set(['replace', 'regexp_replace', 'encode']);

const LOGICAL = new Set(['and', 'or', 'not']);
const WORD_OPERATORS = new Set(['is', 'in', 'like', 'ilike', 'between', 'similar', 'escape', 'regexp', 'rlike', 'div', 'mod', 'xor', 'collate', 'at']);
const OPERATOR_CHARS = '+-*/%|&^=!<>~:@#?';

/** One level of nesting: a parenthesised group, a call's arguments, brackets or a CASE ... END. */
interface Frame {
  kind: 'group' | 'call' | 'bracket' | 'case';
  /** The called function, lower case, for calls. */
  fn?: string;
  /** Deepest item so far, and the item being read: its current run of non-logical operators. */
  deepest: number;
  runOperators: number;
  runOperand: number;
  itemDeepest: number;
  /** The argument being read: its position, how many terms it holds, the literal it is when it is one. */
  arg: number;
  argTerms: number;
  argNumber?: number;
  argString?: number;
  args: Array<{ number?: number; string?: number }>;
  /** Whether something inside may grow its input (a growing or sizing call). */
  grows: boolean;
}

const frame = (kind: Frame['kind'], fn?: string): Frame => ({
  kind,
  fn,
  deepest: 0,
  runOperators: 0,
  runOperand: 0,
  itemDeepest: 0,
  arg: 0,
  argTerms: 0,
  args: [],
  grows: false,
});

/**
 * Checks an SQL expression before it reaches Lance, in one pass over its text:
 *
 * - one expression only: Lance's parser reads one and ignores whatever follows a `;`; comments, NUL
 *   and `$` (dollar quoting, placeholders) are refused too, since they would hide text from this scan;
 * - at most SQL_EXPRESSION_MAX_BYTES bytes and SQL_EXPRESSION_MAX_TERMS terms (words, literals,
 *   operators, commas): 50,000 ANDed comparisons ended the process in Lance's planner;
 * - nesting at most SQL_EXPRESSION_MAX_DEPTH deep, counting each operator other than AND, OR and
 *   NOT in a chain (`a + b + c` is two deep, as the tree Lance builds from it) and each bracket, call
 *   or CASE: a chain of about 600 `+` overflowed Lance's stack. Logical chains are bounded by the
 *   term count: Lance took 30,000 ANDs;
 * - `repeat`-like counts and growing functions as SIZING and GROWING describe.
 */
export function checkSqlExpression(text: string, what: string, limits: SqlLimits = inputLimits().sqlExpression): string {
  // Three bytes a UTF-16 unit at most: short texts need no count.
  if (text.length * 3 > limits.maxBytes && Buffer.byteLength(text, 'utf8') > limits.maxBytes) {
    throw invalidInput(`${what} is longer than ${limits.maxBytes} bytes (SQL_EXPRESSION_MAX_BYTES)`);
  }
  const stack: Frame[] = [frame('group')];
  let top = stack[0];
  let terms = 0;
  /** The last word read, while it may still turn out to name a call. */
  let word: string | undefined;
  const fail = (message: string) => invalidInput(`${what} ${message}`);
  const count = () => {
    if (++terms > limits.maxTerms) throw fail(`has more than ${limits.maxTerms} terms (SQL_EXPRESSION_MAX_TERMS)`);
  };
  const term = () => {
    count();
    top.argTerms++;
    top.argNumber = top.argString = undefined;
  };
  const operand = (depth: number) => {
    if (depth > top.runOperand) top.runOperand = depth;
    closeRun(top);
  };
  const operator = () => {
    term();
    top.runOperators++;
  };
  const logical = () => {
    term();
    endRun(top);
  };
  const open = (kind: Frame['kind'], fn?: string) => {
    if (stack.length > limits.maxDepth) throw fail(`nests deeper than ${limits.maxDepth} (SQL_EXPRESSION_MAX_DEPTH)`);
    top = frame(kind, fn);
    stack.push(top);
  };
  const close = (kind: Frame['kind'], found: string) => {
    if (stack.length === 1 || top.kind !== kind) throw fail(`has an unmatched '${found}'`);
    const done = stack.pop()!;
    endArg(done, limits, fail);
    endItem(done);
    top = stack[stack.length - 1];
    const grows = done.kind === 'call' && growsItself(done);
    if (grows && done.grows) throw fail(`nests ${done.fn}() around another function that makes text or lists larger; their sizes would multiply`);
    top.grows ||= grows || done.grows;
    top.argTerms++;
    top.argNumber = top.argString = undefined;
    operand(done.deepest + 1);
  };

  for (let i = 0; i < text.length; ) {
    const c = text[i];
    const code = text.charCodeAt(i);
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const pending = word;
    word = undefined;
    if (c === "'" || c === '"' || c === '`') {
      // A letter right before a quote makes a prefixed literal (E'...' reads backslash escapes);
      // its end is where Lance's parser may not agree with this scan: refuse the ambiguous case.
      const prefixed = c === "'" && i > 0 && /[A-Za-z0-9_]/.test(text[i - 1]);
      const end = closingQuote(text, i, c);
      if (prefixed && text.slice(i, end).includes('\\')) throw fail('holds a prefixed string literal with a backslash, which this server does not accept');
      term();
      if (c === "'") {
        // Its length matters to replace(); a typed literal (DATE '...') is no plain string.
        top.argString = pending === undefined ? end - i - 2 : undefined;
        operand(0);
        i = end;
        continue;
      }
      // Quoted identifier: a term, or a call's name.
      word = text.slice(i + 1, end - 1).toLowerCase();
      operand(0);
      i = end;
      continue;
    }
    if (isDigit(code) || (c === '.' && isDigit(text.charCodeAt(i + 1)))) {
      let j = i;
      while (j < text.length && /[0-9A-Za-z_.]/.test(text[j])) {
        // An exponent's sign belongs to the number.
        if ((text[j] === 'e' || text[j] === 'E') && (text[j + 1] === '+' || text[j + 1] === '-') && !/^0[xX]/.test(text.slice(i, i + 2))) j++;
        j++;
      }
      term();
      top.argNumber = Number(text.slice(i, j).replace(/_/g, ''));
      operand(0);
      i = j;
      continue;
    }
    if (isWordStart(code)) {
      let j = i + 1;
      while (j < text.length && isWordPart(text.charCodeAt(j))) j++;
      const lower = text.slice(i, j).toLowerCase();
      i = j;
      if (LOGICAL.has(lower)) logical();
      else if (WORD_OPERATORS.has(lower)) operator();
      else if (lower === 'case') {
        term();
        open('case');
      } else if (lower === 'when' || lower === 'then' || lower === 'else') {
        if (top.kind !== 'case') throw fail(`has '${lower.toUpperCase()}' outside CASE ... END`);
        term();
        endItem(top);
      } else if (lower === 'end' && top.kind === 'case') {
        term();
        close('case', 'END');
      } else {
        term();
        word = lower;
        operand(0);
      }
      continue;
    }
    switch (c) {
      case '(':
        open(pending !== undefined ? 'call' : 'group', pending);
        i++;
        continue;
      case '[':
        open('bracket');
        i++;
        continue;
      case ')':
        close(top.kind === 'call' ? 'call' : 'group', ')');
        i++;
        continue;
      case ']':
        close('bracket', ']');
        i++;
        continue;
      case ',':
        if (stack.length === 1) throw fail('must be a single SQL expression: found \',\' outside any call or list');
        count();
        endArg(top, limits, fail);
        endItem(top);
        i++;
        continue;
      case ';':
        throw fail(`must be a single SQL expression: found ';' at offset ${i}`);
      case '\u0000':
        throw fail('contains a NUL character');
      case '$':
        throw fail(`holds '$' at offset ${i}: dollar-quoted strings and placeholders are not accepted`);
      case '.':
        // A field of a struct: one more level of access.
        operator();
        i++;
        continue;
    }
    if (c === '-' && text[i + 1] === '-') throw fail('holds a comment (--), which is not accepted');
    if (c === '/' && text[i + 1] === '*') throw fail('holds a comment (/* */), which is not accepted');
    if (OPERATOR_CHARS.includes(c)) {
      let j = i + 1;
      while (j < text.length && OPERATOR_CHARS.includes(text[j]) && !(text[j] === '-' && text[j + 1] === '-') && !(text[j] === '/' && text[j + 1] === '*')) j++;
      operator();
      i = j;
      continue;
    }
    // Anything else (other punctuation) is left to Lance's parser, as one term.
    term();
    i++;
  }
  if (stack.length > 1) throw fail(`has an unclosed '${top.kind === 'case' ? 'CASE' : top.kind === 'bracket' ? '[' : '('}'`);
  endItem(top);
  if (top.deepest > limits.maxDepth) throw fail(`nests deeper than ${limits.maxDepth} (SQL_EXPRESSION_MAX_DEPTH)`);
  return text;
}

/** Where a quoted literal or identifier opened at `start` ends (a doubled quote stays inside); the end of the text if never. */
function closingQuote(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] !== quote) continue;
    if (text[i + 1] === quote) i++;
    else return i + 1;
  }
  return text.length;
}

/** An operand ends the run's operand slot; operators before the next operand add to the same run. */
function closeRun(f: Frame): void {
  const depth = f.runOperators + f.runOperand;
  if (depth > f.itemDeepest) f.itemDeepest = depth;
}

/** A logical operator starts a new run: `a + b AND c + d` is two runs of depth 1. */
function endRun(f: Frame): void {
  closeRun(f);
  f.runOperators = 0;
  f.runOperand = 0;
}

/** A comma, WHEN/THEN/ELSE or the end of the frame ends an item: its depth counts for the frame. */
function endItem(f: Frame): void {
  endRun(f);
  if (f.itemDeepest > f.deepest) f.deepest = f.itemDeepest;
  f.itemDeepest = 0;
}

function endArg(f: Frame, limits: SqlLimits, fail: (m: string) => Error): void {
  if (f.kind === 'call') {
    f.args.push({ number: f.argTerms === 1 ? f.argNumber : undefined, string: f.argTerms === 1 ? f.argString : undefined });
    const counts = f.fn ? SIZING.get(f.fn) : undefined;
    if (counts?.includes(f.arg) && f.argTerms > 0) {
      const n = f.argTerms === 1 ? f.argNumber : undefined;
      if (n === undefined || !Number.isInteger(n) || Math.abs(n) > limits.maxRepeat) {
        throw fail(`gives ${f.fn}() a count that is not an integer literal of at most ${limits.maxRepeat} (SQL_EXPRESSION_MAX_REPEAT)`);
      }
    }
  }
  f.arg++;
  f.argTerms = 0;
  f.argNumber = f.argString = undefined;
}

/** Whether a call, now read whole, may make its input larger. */
function growsItself(f: Frame): boolean {
  if (!f.fn) return false;
  if (SIZING.has(f.fn)) return true;
  if (!GROWING.has(f.fn)) return false;
  if (f.fn === 'replace') {
    const from = f.args[1]?.string;
    const to = f.args[2]?.string;
    return from === undefined || to === undefined || from === 0 || to > from;
  }
  if (f.fn === 'regexp_replace') return f.args[2]?.string !== 0;
  return true;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isWordStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code >= 0x80;
}

function isWordPart(code: number): boolean {
  return isWordStart(code) || isDigit(code);
}

/** A zod string that is a usable SQL expression; its problem is answered 400 code 13 like any bad field. */
export const sqlExpression = (what: string) =>
  z.string().superRefine((text, ctx) => {
    try {
      checkSqlExpression(text, what);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  });
