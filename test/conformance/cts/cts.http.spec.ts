/**
 * Runs every case of the Lance CTS contracts (./contracts, the Lance project's text) over HTTP
 * against the real, compiled server, one jest test per case. See cts-runner.ts for the contract
 * format and how a case becomes HTTP requests.
 *
 * - capabilities.yaml: the flags we declare; a case needing a flag we do not declare is skipped.
 * - departures.yaml: the cases we do not pass, each with its verdict (`case-wrong`, argued from the
 *   spec, or `server-bug`). A case that fails and is not listed fails its test; a listed case that
 *   passes fails too, so the list stays exact.
 *
 * CTS_REPORT=<file> writes every case's outcome there as JSON.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunningServer, startServer } from '../../support/server';
import { CaseOutcome, CtsRunner, explain, loadCapabilities, loadContracts, loadDepartures, missingCapabilities } from './cts-runner';

const contracts = loadContracts();
const declared = loadCapabilities(join(__dirname, 'capabilities.yaml'), contracts);
const departures = loadDepartures(join(__dirname, 'departures.yaml'), contracts, declared);

describe('Lance CTS contracts over HTTP', () => {
  let server: RunningServer;
  let runner: CtsRunner;
  const outcomes: Array<CaseOutcome & { departure?: string }> = [];

  beforeAll(async () => {
    server = await startServer();
    runner = new CtsRunner(server.url);
  });
  afterAll(async () => {
    if (process.env.CTS_REPORT) writeFileSync(process.env.CTS_REPORT, JSON.stringify(outcomes, null, 2));
    await server?.stop();
  });

  it('reads main.yaml and the six contract files it includes', () => {
    expect(contracts.blocks.map((b) => b.file).filter((f, i, all) => all.indexOf(f) === i)).toEqual([
      'namespace.yaml',
      'table.yaml',
      'data.yaml',
      'index.yaml',
      'tag.yaml',
      'transaction.yaml',
    ]);
    expect(contracts.cases.length).toBeGreaterThan(0);
    // An operation block without cases says why (BatchCreateTableVersions: the contracts leave it to the Rust trait).
    expect(contracts.blocks.filter((b) => b.cases.length === 0 && !b.skipReason?.trim()).map((b) => b.operation)).toEqual([]);
    // Every case runs: none needs a flag we do not declare (capabilities.yaml says what we do).
    expect(contracts.cases.filter((c) => missingCapabilities(c, declared).length > 0).map((c) => c.id)).toEqual([]);
  });

  for (const block of contracts.blocks) {
    describe(`${block.file} ${block.operation}`, () => {
      for (const c of block.cases) {
        if (missingCapabilities(c, declared).length) continue;
        const departure = departures.get(c.id);
        const title = departure ? `${c.id} [departure: ${departure.status}]` : c.id;
        it(title, async () => {
          const outcome = await runner.runCase(c);
          outcomes.push({ ...outcome, ...(departure ? { departure: departure.status } : {}) });
          if (departure && outcome.passed) {
            throw new Error(`${c.id} is listed in departures.yaml (${departure.status}) but now passes: remove its entry.\n${explain(c, outcome)}`);
          }
          if (!departure && !outcome.passed) {
            throw new Error(`${explain(c, outcome)}\n(neither passes nor is listed in departures.yaml)`);
          }
        });
      }
    });
  }
});
