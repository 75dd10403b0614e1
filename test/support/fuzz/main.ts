import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomSeed } from './rng';
import { distinctFindings, formatFinding, runMutationFuzz } from './session';

/**
 * `npm run fuzz`: the mutation fuzzer for longer than the test suite runs it.
 *   FUZZ_SECONDS  how long to run (600)
 *   FUZZ_SEED     the run's seed (random, printed)
 *   FUZZ_CASES    stop after this many cases
 *   FUZZ_CASE     replay only these cases of the seed's run (`17` or `17,254`)
 * Exits 1 when it found anything.
 */
async function main(): Promise<void> {
  // Every server's data directory goes under one temporary directory, removed at the end.
  const scratch = mkdtempSync(join(tmpdir(), 'lance-fuzz-'));
  process.env.TMPDIR = scratch;
  process.env.RUST_LOG ??= 'error';
  try {
    await fuzz();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function fuzz(): Promise<void> {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) >>> 0 : randomSeed();
  const seconds = Number(process.env.FUZZ_SECONDS ?? 600);
  const only = process.env.FUZZ_CASE?.split(',').map((s) => Number(s.trim()));
  const cases = process.env.FUZZ_CASES ? Number(process.env.FUZZ_CASES) : undefined;
  console.log(`fuzz: seed ${seed}${only ? `, cases ${only.join(', ')}` : `, ${cases ?? 'unbounded'} cases within ${seconds} s`}`);
  const report = await runMutationFuzz({ seed, seconds: only ? undefined : seconds, cases, only, log: (line) => console.log(line) });
  const distinct = distinctFindings(report.findings);
  console.log(`\nfuzz: seed ${seed}: ${report.cases} cases over ${report.operations} operations in ${report.seconds} s; ${report.restarts} server restarts`);
  console.log(`answers: ${JSON.stringify(report.statuses)}`);
  console.log(`slowest answers:\n${report.slowest.map((x) => `  ${x.ms} ms  ${x.what}`).join('\n')}`);
  if (report.unseeded.length) console.log(`operations with no valid request written (sent an empty one): ${report.unseeded.join(', ')}`);
  console.log(`${report.findings.length} findings, ${distinct.length} distinct:`);
  for (const d of distinct) console.log(`\n[${d.count}x] ${d.key}\n${formatFinding(d.first)}`);
  process.exitCode = report.findings.length ? 1 : 0;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 2;
});
