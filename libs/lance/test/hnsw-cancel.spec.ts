import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

describe('stopping an HNSW build in its thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hnsw-cancel-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops each build it is asked to, wherever the thread is, and the process lives on', () => {
    // The compiled module (its thread is a compiled file), in a process of its own: a stop that
    // takes the process down shows as its exit status rather than ending the test run.
    const script = `
      const { buildGraphOffThread } = require(${JSON.stringify(join(ROOT, 'dist/libs/lance/src/hnsw-graph-build.js'))});
      const dim = 32, rows = 10000, outcomes = [];
      (async () => {
        for (let i = 0; i < 48; i++) {
          const vectors = Float32Array.from({ length: rows * dim }, Math.random);
          const rowIds = BigUint64Array.from({ length: rows }, (_, r) => BigInt(r));
          const files = { graphFile: ${JSON.stringify(dir)} + '/g' + i + '.bin', rowIdsFile: ${JSON.stringify(dir)} + '/g' + i + '.rowids', metaFile: ${JSON.stringify(dir)} + '/g' + i + '.json' };
          const stop = new AbortController();
          // Stops spread over the build: while the thread starts, while it adds points.
          setTimeout(() => stop.abort(), (i % 8) * 15);
          const meta = { column: 'v', space: 'l2', dim, m: 16, efConstruction: 200, tableVersion: 1 };
          outcomes.push(await buildGraphOffThread({ meta, vectors, rowIds, ...files }, stop.signal).then(() => 'built', (e) => e.message));
        }
        console.log(JSON.stringify(outcomes));
      })();`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).not.toContain('FATAL ERROR');
    expect(run.status).toBe(0);
    const outcomes = JSON.parse(run.stdout) as string[];
    expect(outcomes).toHaveLength(48);
    for (const outcome of outcomes) expect(outcome).toMatch(/^the HNSW build was stopped/);
    // Every stop came long before a whole build (about a second here), so none wrote its last file.
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toEqual([]);
  }, 150_000);
});
