import { Rng } from './rng';

/**
 * SQL expressions over the fixture table's columns (`id` int, `text` and `category` strings,
 * `labels` a list of strings, `vector` a fixed-size list of floats), from a few terms to tens of
 * thousands: long AND/OR chains, deep parentheses, huge IN lists, CASE chains, functions asked for
 * huge results, literals with quotes. `budget` bounds the number of terms; most expressions stay
 * far below it.
 */
export function sqlExpression(rng: Rng, budget: number): string {
  return rng.weighted<() => string>([
    [30, () => new SqlGen(rng, rng.size(1, budget)).predicate(0)],
    [6, () => chain(rng, rng.size(2, Math.max(2, budget)))],
    [4, () => nested(rng, rng.size(1, Math.min(budget, 400)))],
    [4, () => inList(rng, rng.size(1, Math.max(1, budget)))],
    [4, () => caseChain(rng, rng.size(1, Math.min(budget, 5000)))],
    [4, () => hugeFunction(rng)],
    [3, () => expensiveChain(rng)],
    [3, () => rng.pick(ODD)],
  ])();
}

/**
 * Terms each allowed on their own (a count within SQL_EXPRESSION_MAX_REPEAT) whose work adds up
 * over a large table: what the data plane's time limit and fair share are for.
 */
function expensiveChain(rng: Rng): string {
  const terms = rng.size(2, 100);
  const term = rng.pick(['length(repeat(text, 1000)) > 0', "length(lpad(text, 1000, 'ab')) > 1", "regexp_like(repeat(text, 500), '(a|b)*c')", 'length(repeat(category, 999)) > 0']);
  return Array.from({ length: terms }, () => term).join(' AND ');
}

/** A value expression (for an update's new value, a computed column, a view's projection). */
export function sqlValue(rng: Rng, budget: number): string {
  return rng.weighted<() => string>([
    [30, () => new SqlGen(rng, rng.size(1, budget)).value(0)],
    [5, () => hugeFunction(rng)],
    [4, () => caseChain(rng, rng.size(1, Math.min(budget, 5000)))],
    [3, () => nested(rng, rng.size(1, Math.min(budget, 400)))],
    [3, () => rng.pick(ODD)],
  ])();
}

const COLUMNS = ['id', 'text', 'category', 'labels', 'vector', '_rowid', '_distance', 'nosuch', '"id"', '`text`'];
const NUMBERS = ['0', '1', '-1', '2147483647', '2147483648', '-2147483649', '9223372036854775807', '9223372036854775808', '18446744073709551616', '1e308', '1e309', '-1e309', '0.5', '1.0e-400', 'NaN', '99999999999999999999999999999999999999'];
const STRINGS = ["'apple'", "''", "'it''s'", "''''", "'%'", "'_'", "'\\'", "'🍎 pie'", "'\u202e'", "'\\x00'", `'${'x'.repeat(300)}'`, "'a\"b'", "'a''--'", "'; DROP TABLE t --'"];
const COMPARE = ['=', '!=', '<>', '<', '<=', '>', '>=', 'IS DISTINCT FROM'];
const ARITH = ['+', '-', '*', '/', '%', '||'];
const FUNCTIONS: Array<[string, number]> = [
  ['abs', 1], ['round', 2], ['upper', 1], ['lower', 1], ['length', 1], ['concat', 3], ['substr', 3], ['coalesce', 2],
  ['nullif', 2], ['array_has', 2], ['array_length', 1], ['regexp_match', 2], ['regexp_replace', 3], ['starts_with', 2],
  ['trim', 1], ['sqrt', 1], ['power', 2], ['log', 2], ['to_hex', 1], ['md5', 1], ['reverse', 1], ['strpos', 2], ['split_part', 3],
];
const CASTS = ['INT', 'BIGINT', 'TINYINT', 'DOUBLE', 'FLOAT', 'STRING', 'VARCHAR', 'BOOLEAN', 'DATE', 'TIMESTAMP', 'DECIMAL(38, 10)', 'DECIMAL(76, 0)', 'BINARY'];
/** Expressions no generator writes by chance. */
const ODD = [
  '', ' ', 'TRUE', 'NULL', 'id', '*', 'id = id = id', '((((', '))))', 'id IN ()', "text LIKE '%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%b'",
  "regexp_match(text, '(a*)*$')", "regexp_match(text, '(?:(?:(?:a{1000}){1000}){1000})')", 'id / 0', 'id % 0', '-id', '- - - - - - - - id',
  'vector[1] > 0', 'labels[99999999999] IS NULL', "text = 'unterminated", 'id BETWEEN 9223372036854775807 AND -9223372036854775808',
  'CAST(id AS DECIMAL(76, 76))', "arrow_cast(id, 'Utf8')", "arrow_cast(id, 'FixedSizeBinary(2147483647)')", 'make_array(' + '1,'.repeat(5000) + '1)',
  "array_repeat(text, 2147483647)", "range(0, 9223372036854775807)", "generate_series(1, 1000000000)", 'id::text', '@@@', '$1', '?', ':x',
];

class SqlGen {
  constructor(
    private readonly rng: Rng,
    /** Terms left to write. */
    private left: number,
  ) {}

  predicate(depth: number): string {
    const { rng } = this;
    this.left--;
    if (this.left <= 0 || depth > 60) return this.comparison(depth);
    return rng.weighted<() => string>([
      [5, () => this.comparison(depth)],
      [4, () => `${this.predicate(depth + 1)} ${rng.pick(['AND', 'OR'])} ${this.predicate(depth + 1)}`],
      [2, () => `(${this.predicate(depth + 1)})`],
      [1, () => `NOT ${this.predicate(depth + 1)}`],
      [1, () => `${this.value(depth + 1)} IS ${rng.pick(['', 'NOT '])}NULL`],
      [1, () => `${this.value(depth + 1)} ${rng.pick(['', 'NOT '])}IN (${Array.from({ length: rng.size(1, 50) }, () => this.literal()).join(', ')})`],
      [1, () => `${this.value(depth + 1)} BETWEEN ${this.literal()} AND ${this.literal()}`],
      [1, () => `${rng.pick(['text', 'category'])} ${rng.pick(['LIKE', 'ILIKE', 'NOT LIKE'])} ${rng.pick(["'%pie%'", "'a%'", "'%'", "'_%_%_'", "'\\%'"])}`],
      [1, () => `array_has(labels, ${rng.pick(STRINGS)})`],
    ])();
  }

  private comparison(depth: number): string {
    return `${this.value(depth + 1)} ${this.rng.pick(COMPARE)} ${this.value(depth + 1)}`;
  }

  value(depth: number): string {
    const { rng } = this;
    this.left--;
    if (this.left <= 0 || depth > 60) return rng.chance(0.5) ? rng.pick(COLUMNS) : this.literal();
    return rng.weighted<() => string>([
      [6, () => rng.pick(COLUMNS)],
      [5, () => this.literal()],
      [3, () => `${this.value(depth + 1)} ${rng.pick(ARITH)} ${this.value(depth + 1)}`],
      [3, () => {
        const [name, arity] = rng.pick(FUNCTIONS);
        return `${name}(${Array.from({ length: rng.chance(0.8) ? arity : rng.int(0, 5) }, () => this.value(depth + 1)).join(', ')})`;
      }],
      [1, () => `CAST(${this.value(depth + 1)} AS ${rng.pick(CASTS)})`],
      [1, () => `CASE WHEN ${this.predicate(depth + 1)} THEN ${this.value(depth + 1)} ELSE ${this.value(depth + 1)} END`],
      [1, () => `(${this.value(depth + 1)})`],
    ])();
  }

  private literal(): string {
    return this.rng.chance(0.5) ? this.rng.pick(NUMBERS) : this.rng.pick(STRINGS);
  }
}

/** `id>1 AND id>1 AND ...`: what a parser that recurses per operator cannot take. */
export function termChain(terms: number, term = 'id>1', join = ' AND '): string {
  return Array.from({ length: terms }, () => term).join(join);
}

function chain(rng: Rng, terms: number): string {
  const joiner = rng.pick([' AND ', ' OR ', ' + ', ' || ']);
  const term = joiner.includes('AND') || joiner.includes('OR') ? rng.pick(['id>1', 'id = 3', "text != 'x'", 'TRUE']) : rng.pick(['id', '1', "'a'"]);
  const body = termChain(terms, term, joiner);
  return joiner.includes('AND') || joiner.includes('OR') ? body : `${body} > 0`;
}

function nested(rng: Rng, depth: number): string {
  const kind = rng.int(0, 2);
  if (kind === 0) return `${'('.repeat(depth)}id > 1${')'.repeat(depth)}`;
  if (kind === 1) return `${'NOT '.repeat(depth)}id > 1`;
  return `${'abs('.repeat(depth)}id${')'.repeat(depth)} > 1`;
}

function inList(rng: Rng, items: number): string {
  const strings = rng.chance(0.3);
  return `${strings ? 'text' : 'id'} IN (${Array.from({ length: items }, (_, i) => (strings ? `'s${i}'` : String(i))).join(',')})`;
}

function caseChain(rng: Rng, arms: number): string {
  const whens = Array.from({ length: arms }, (_, i) => `WHEN id = ${i} THEN '${i}'`).join(' ');
  return rng.chance(0.5) ? `CASE ${whens} ELSE 'other' END = 'x'` : `(CASE ${whens} END) IS NULL`;
}

/** A function whose argument asks for a huge result per row. */
function hugeFunction(rng: Rng): string {
  const n = rng.pick(['2500000', '100000000', '2147483647', '4294967296', '9223372036854775807', '-1', '1e18']);
  const call = rng.pick([
    `repeat(text, ${n})`, `lpad(text, ${n})`, `lpad(text, ${n}, 'ab')`, `rpad(category, ${n}, 'x')`,
    `repeat(repeat(text, 1000), ${n})`, `concat(repeat(text, ${n}), repeat(text, ${n}))`, `to_hex(${n})`, `substr(text, ${n}, ${n})`,
    `left(text, ${n})`, `array_repeat(id, ${n})`, `power(10, ${n})`,
  ]);
  return rng.chance(0.5) ? `length(${call}) > 0` : call;
}
