import { CaseGenerator } from '../support/fuzz/cases';
import { distinctFindings, formatFinding, runMutationFuzz } from '../support/fuzz/session';

/** A fixed seed and a number of cases that keep this to about a minute; `npm run fuzz` runs longer, with any seed. */
const SEED = 0x5eedf022;
const CASES = 600;

describe('mutated requests over every route', () => {
  it('are each answered, none with a 5xx or a Lance failure, every error as JSON {error, code} without internals, and no refusal changes the catalog', async () => {
    const report = await runMutationFuzz({ seed: SEED, cases: CASES });
    console.info(
      `mutation fuzz: seed ${SEED}, ${report.cases} cases over ${report.operations} operations in ${report.seconds} s; ` +
        `answers ${JSON.stringify(report.statuses)}; slowest ${report.slowest[0]?.ms} ms`,
    );
    const findings = distinctFindings(report.findings).map((d) => `[${d.count}x] ${formatFinding(d.first)}`);
    expect(findings).toEqual([]);
    expect(report.restarts).toBe(0);
    expect(report.cases).toBe(CASES);
    // Every served operation has a valid request of its own to mutate, and the mutations reach
    // past the first check often enough that some are taken and many are refused.
    expect(report.unseeded).toEqual([]);
    expect(report.operations).toBeGreaterThan(50);
    const answered = (from: number, to: number) => Object.entries(report.statuses).filter(([s]) => Number(s.split(' ')[0]) >= from && Number(s.split(' ')[0]) < to).reduce((n, [, k]) => n + k, 0);
    expect(answered(200, 300)).toBeGreaterThan(CASES / 10);
    expect(answered(400, 500)).toBeGreaterThan(CASES / 4);
  }, 15 * 60_000);

  it('makes a case again from its seed and index alone, whatever ran before it', () => {
    const operations = [
      { method: 'POST', template: '/v1/table/{id}/insert' },
      { method: 'POST', template: '/v1/table/{id}/count_rows' },
      { method: 'POST', template: '/v1/table/{id}/update' },
      { method: 'GET', template: '/v1/namespace/{id}/list' },
    ];
    const fixture = { transactionId: '00000000-0000-0000-0000-000000000000', location: '/warehouse/fz/t.lance' };
    const generator = new CaseGenerator(SEED, operations, fixture);
    const inOrder = Array.from({ length: 200 }, (_, i) => generator.caseAt(i));
    const again = new CaseGenerator(SEED, operations, fixture);
    for (const i of [199, 3, 120, 0]) expect(again.caseAt(i)).toEqual(inOrder[i]);
    expect(new CaseGenerator(SEED + 1, operations, fixture).caseAt(0)).not.toEqual(inOrder[0]);
    expect(new Set(inOrder.map((c) => c.kind))).toEqual(new Set(['valid', 'arrow', 'json', 'sql', 'id', 'query', 'header']));
  });
});
