/**
 * The meta-test of the field-level suite (see coverage.ts): every request field, query parameter
 * and documented status of every operation of the spec is named by a test of this folder, or
 * exempted with a reason; no test names what the spec does not have. No server runs here.
 */
import { basename } from 'node:path';
import { GENERIC_FILES, exemptions, fieldSuiteFiles, isToken, registeredTitles, specItems, specOperations, tokensOfTitle } from './coverage';

describe('field-level coverage of the spec', () => {
  const items = specItems();
  const known = new Set(items.map((i) => i.token));
  const titles = registeredTitles(fieldSuiteFiles());
  const named = new Map<string, Set<string>>();
  for (const [file, list] of titles) {
    for (const title of list) for (const token of tokensOfTitle(title)) named.set(token, (named.get(token) ?? new Set()).add(basename(file)));
  }
  const exempt = exemptions();
  const exemptTokens = new Map(exempt.flatMap((e) => e.tokens.map((t) => [t, e.reason] as const)));

  it('reads the 54 operations of the spec and their items', () => {
    expect(specOperations()).toHaveLength(54);
    expect(new Set(items.map((i) => i.token)).size).toBe(items.length);
    for (const t of ['QueryTable.k', 'AlterTransaction.actions.setStatusAction', 'MergeInsertIntoTable?when_matched_update_all', 'CreateTable#409', 'QueryTable#5XX']) {
      expect([t, known.has(t)]).toEqual([t, true]);
    }
    expect(known.has('ExplainTableQueryPlan.query.k')).toBe(false);
  });

  it('finds the suites and every title they register names at least one token', () => {
    expect(titles.size).toBeGreaterThan(5);
    const untitled = [...titles].flatMap(([file, list]) => list.filter((t) => tokensOfTitle(t).length === 0).map((t) => `${basename(file)}: ${t}`));
    expect(untitled).toEqual([]);
  });

  it('has a test naming every spec item that is not exempted', () => {
    const missing = items.filter((i) => !named.has(i.token) && !exemptTokens.has(i.token)).map((i) => i.token);
    if (missing.length) throw new Error(`${missing.length} spec items no test names (name them in a test's title, see coverage.ts):\n  ${missing.join('\n  ')}`);
  });

  it('names nothing the spec does not have', () => {
    const strays = [...named.keys()].filter((t) => !known.has(t) || !isToken(t)).map((t) => `${t} (in ${[...named.get(t)!].join(', ')})`);
    expect(strays).toEqual([]);
  });

  it('keeps the exemptions exact: each names spec items no test names', () => {
    const notInSpec = [...exemptTokens.keys()].filter((t) => !known.has(t));
    const alsoTested = [...exemptTokens.keys()].filter((t) => named.has(t)).map((t) => `${t} (tested in ${[...named.get(t)!].join(', ')})`);
    expect({ notInSpec, alsoTested }).toEqual({ notInSpec: [], alsoTested: [] });
    for (const e of exempt) expect(e.reason.length).toBeGreaterThan(20);
  });

  it('prints the tally and every exemption with its reason', () => {
    const generic = new Set(GENERIC_FILES);
    const byKind = (kind: string) => items.filter((i) => i.kind === kind);
    const tally = (list: typeof items) => {
      let real = 0;
      let loop = 0;
      let exempted = 0;
      for (const i of list) {
        const files = named.get(i.token);
        if (files && [...files].some((f) => !generic.has(f))) real++;
        else if (files) loop++;
        else if (exemptTokens.has(i.token)) exempted++;
      }
      return { items: list.length, real, loop, exempted };
    };
    const lines = [
      `spec items: ${items.length}`,
      ...(['field', 'nested', 'query', 'status'] as const).map((k) => {
        const t = tally(byKind(k));
        return `  ${k.padEnd(6)} ${String(t.items).padStart(4)}: ${t.real} by tests of their own, ${t.loop} by the loops over every operation, ${t.exempted} exempted`;
      }),
      'exemptions:',
      ...exempt.map((e) => `  - ${e.tokens.length} item(s): ${e.tokens.length > 6 ? `${e.tokens.slice(0, 3).join(', ')}, ... (${e.tokens.length})` : e.tokens.join(', ')}\n    because ${e.reason}`),
    ];
    console.log(lines.join('\n'));
    const all = tally(items);
    expect(all.real + all.loop + all.exempted).toBe(all.items);
  });
});
