import { CatalogError } from '@app/catalog';
import { DEFAULT_INPUT_LIMITS } from '@app/config';
import { SqlLimits, checkSqlExpression } from '../src/http/sql-expression';
import { parseJsonBody } from '../src/http/json-body';

const LIMITS = DEFAULT_INPUT_LIMITS.sqlExpression;

function problem(text: string, limits: SqlLimits = LIMITS): string | undefined {
  try {
    checkSqlExpression(text, 'filter', limits);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(CatalogError);
    expect((e as CatalogError).code).toBe(13);
    return (e as Error).message;
  }
}

describe('checkSqlExpression', () => {
  it('passes the filters people write', () => {
    for (const ok of [
      'id > 1',
      "id > 1 AND text = 'it''s'",
      "category IN ('a', 'b') OR id BETWEEN 3 AND 7",
      'NOT (id < 0) AND text IS NOT NULL',
      "CASE WHEN id = 1 THEN 'a' WHEN id = 2 THEN 'b' ELSE 'c' END = 'a'",
      'id::bigint > 1 AND vector[1] > 0.5e-3',
      '"quoted col" = 1 AND `other` = 2',
      "regexp_like(text, '(a+)+$') AND text LIKE 'a%'",
      "lpad(CAST(id AS VARCHAR), 8, '0') = '00000001' AND length(repeat('-', 3)) = 3",
      "replace(replace(phone, '-', ''), ' ', '') = '123' AND regexp_replace(regexp_replace(s, '[0-9]', '', 'g'), 'x', '') = ''",
      "text = 'a;b -- c /* d */ $e'",
      `id IN (${Array.from({ length: 4000 }, (_, i) => i).join(',')})`,
      Array(2500).fill('id > 1').join(' AND '),
      `id${' + 1'.repeat(99)} > 0`,
      "DATE '2024-01-01' < ts AND X'61' = b AND N'a' = s",
    ]) {
      expect(problem(ok)).toBeUndefined();
    }
  });

  it('counts terms: 50,000 ANDed comparisons are far past the limit', () => {
    expect(problem(Array(50_000).fill('id>1').join(' AND '))).toMatch(/filter has more than 10000 terms \(SQL_EXPRESSION_MAX_TERMS\)/);
    expect(problem('a = 1 AND b = 2', { ...LIMITS, maxTerms: 6 })).toMatch(/more than 6 terms/);
    expect(problem('a = 1 AND b = 2', { ...LIMITS, maxTerms: 7 })).toBeUndefined();
  });

  it('bounds the depth of operator chains and nesting, as the tree Lance builds from them', () => {
    expect(problem(`id${' + 1'.repeat(700)} > 0`)).toMatch(/nests deeper than 100 \(SQL_EXPRESSION_MAX_DEPTH\)/);
    expect(problem(`id${' || s'.repeat(101)} = ''`)).toMatch(/SQL_EXPRESSION_MAX_DEPTH/);
    expect(problem(`${'('.repeat(101)}id${')'.repeat(101)} > 1`)).toMatch(/SQL_EXPRESSION_MAX_DEPTH/);
    expect(problem(`${'abs('.repeat(60)}id${')'.repeat(60)} + ${'1 + '.repeat(45)}1 > 0`)).toMatch(/SQL_EXPRESSION_MAX_DEPTH/);
    // Logical chains do not deepen the count (the term limit bounds them); nesting inside them does.
    expect(problem(`a + b + c = 1 AND ${'d + '.repeat(10)}e = 2`, { ...LIMITS, maxDepth: 12 })).toBeUndefined();
    expect(problem(`a + b + c = 1 AND ${'d + '.repeat(12)}e = 2`, { ...LIMITS, maxDepth: 12 })).toMatch(/deeper than 12/);
  });

  it('bounds the counts of functions that make their output as large as they are told', () => {
    expect(problem('length(repeat(text, 2500000)) > 0')).toMatch(/gives repeat\(\) a count that is not an integer literal of at most 1000 \(SQL_EXPRESSION_MAX_REPEAT\)/);
    expect(problem('length(repeat(text, id)) > 0')).toMatch(/repeat\(\)/);
    expect(problem('length(REPEAT(text, 10 * 1000)) > 0')).toMatch(/repeat\(\)/);
    expect(problem("lpad(s, 1001, 'x') = ''")).toMatch(/lpad\(\)/);
    expect(problem('cardinality(range(0, 100000000)) > 0')).toMatch(/range\(\)/);
    expect(problem('cardinality(array_repeat(id, 1000000)) > 0')).toMatch(/array_repeat\(\)/);
    expect(problem('length(repeat(text, 1000)) > 0')).toBeUndefined();
    expect(problem('cardinality(generate_series(1, 10)) = 10')).toBeUndefined();
  });

  it('refuses growing functions nested in one another', () => {
    expect(problem('length(repeat(repeat(text, 1000), 1000)) > 0')).toMatch(/nests repeat\(\) around another function .* sizes would multiply/);
    expect(problem("length(replace(replace(text, 'e', 'ee'), 'e', 'ee')) > 0")).toMatch(/nests replace\(\)/);
    expect(problem("length(replace(lower(replace(text, '', 'x')), 'e', 'ee')) > 0")).toMatch(/nests replace\(\)/);
    expect(problem("length(replace(lower(replace(text, '', 'x')), 'e', '')) > 0")).toBeUndefined();
    expect(problem("length(encode(encode(text, 'hex'), 'hex')) > 0")).toMatch(/nests encode\(\)/);
    expect(problem("length(repeat(lpad(text, 1000, 'x'), 1000)) > 0")).toMatch(/nests repeat\(\)/);
    expect(problem("length(regexp_replace(regexp_replace(text, '(.)', '$1$1', 'g'), '(.)', '$1$1', 'g')) > 0")).toMatch(/nests regexp_replace\(\)/);
    expect(problem("length(repeat(text, 3)) + length(replace(text, 'a', 'bb')) > 0")).toBeUndefined();
  });

  it('refuses what would read differently here and in Lance: several expressions, comments, dollar quoting, escape strings', () => {
    expect(problem('id = 1; DROP TABLE t')).toMatch(/single SQL expression: found ';' at offset 6/);
    expect(problem('id = 1, id = 2')).toMatch(/single SQL expression: found ','/);
    expect(problem('id > 1 -- ; x')).toMatch(/comment/);
    expect(problem('id > 1 /* x */')).toMatch(/comment/);
    expect(problem("s = $$ ' $$ OR length(repeat(s, 99999999)) > 0")).toMatch(/'\$'/);
    expect(problem("s = E'\\'' OR length(repeat(s, 99999999)) > 0 OR s = E'\\''")).toMatch(/prefixed string literal with a backslash/);
    expect(problem('a\u0000')).toMatch(/NUL/);
    expect(problem('(a')).toMatch(/unclosed '\('/);
    expect(problem('a)')).toMatch(/unmatched '\)'/);
    expect(problem('WHEN a')).toMatch(/outside CASE/);
    expect(problem('x'.repeat(100), { ...LIMITS, maxBytes: 99 })).toMatch(/longer than 99 bytes \(SQL_EXPRESSION_MAX_BYTES\)/);
    expect(problem('é'.repeat(50), { ...LIMITS, maxBytes: 99 })).toMatch(/longer than 99 bytes/);
    expect(problem('é'.repeat(49), { ...LIMITS, maxBytes: 99 })).toBeUndefined();
  });

  it('scans half a megabyte in well under a second (one pass)', () => {
    const text = Array(40_000).fill("text = 'x'").join(' OR ');
    const started = performance.now();
    expect(problem(text, { ...LIMITS, maxTerms: 1_000_000 })).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('parseJsonBody', () => {
  const limits = { maxDepth: 64, maxArrayItems: 1000 };
  it('refuses numbers that parse to Infinity and nesting past the limit, anywhere in the body', () => {
    const refused = (text: string) => expect(() => parseJsonBody(text, limits)).toThrow(CatalogError);
    refused('1e309');
    refused('{"vector": [1, 2, -1e309]}');
    refused('{"a": {"b": [{"c": 1e400}]}}');
    refused(`{"n": 1${'0'.repeat(400)}}`);
    refused(`${'['.repeat(65)}${']'.repeat(65)}`);
    expect(parseJsonBody(`${'['.repeat(64)}${']'.repeat(64)}`, limits)).toBeDefined();
    expect(parseJsonBody('{"vector": [1e-400, 1e308, -0], "s": "1e309"}', limits)).toEqual({ vector: [0, 1e308, -0], s: '1e309' });
    expect(parseJsonBody('null', limits)).toBeNull();
  });

  it('refuses an array longer than the limit at any depth, and takes one at the limit', () => {
    const items = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
    expect(() => parseJsonBody(`{"entries": [{"id": ${items(1001)}}]}`, limits)).toThrow(/array of 1001 items; at most 1000 .*JSON_MAX_ARRAY_ITEMS/);
    expect(() => parseJsonBody(items(1001), limits)).toThrow(CatalogError);
    expect((parseJsonBody(`{"vector": ${items(1000)}}`, limits) as { vector: number[] }).vector).toHaveLength(1000);
  });
});
