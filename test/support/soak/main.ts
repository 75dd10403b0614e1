import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomSeed } from '../fuzz/rng';
import { runSoak } from './run';

/**
 * `npm run soak`: the cluster under load and faults.
 *   SOAK_SECONDS  how long the load and the faults run (300)
 *   SOAK_SEED     the seed of the fault schedule (random, printed)
 * Exits 1 when anything acknowledged was lost or any answer was unexpected.
 */
async function main(): Promise<void> {
  const base = tmpdir();
  const scratch = mkdtempSync(join(base, 'lance-soak-'));
  process.env.TMPDIR = scratch;
  // PostgreSQL runs as its own user when this runs as root: it must reach its directory under this one.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../services').traversable(scratch);
  process.env.RUST_LOG ??= 'error';
  const seed = process.env.SOAK_SEED ? Number(process.env.SOAK_SEED) >>> 0 : randomSeed();
  const seconds = Number(process.env.SOAK_SECONDS ?? 300);
  console.log(`soak: seed ${seed}, ${seconds} s`);
  try {
    const { result, report } = await runSoak({ seed, seconds, log: (l) => console.log(l), logFile: join(base, `lance-soak-${seed}-nodes.log`) });
    console.log(report);
    process.exitCode = result.problems.length ? 1 : 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 2;
});
