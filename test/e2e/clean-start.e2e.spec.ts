import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startServer } from '../support/server';

const ROOT = resolve(__dirname, '../..');

describe('a clean start', () => {
  it('starts without a deprecation warning from Node, Fastify or BullMQ', async () => {
    const server = await startServer({ env: { NODE_OPTIONS: '' } });
    try {
      // BullMQ warns once its blocking connection connects to Redis: give it the time.
      await new Promise((r) => setTimeout(r, 1500));
      expect(server.output()).toMatch(/listening on/);
      expect(server.output()).not.toMatch(/DeprecationWarning|FSTDEP|maxRetriesPerRequest/);
    } finally {
      await server.stop();
    }
  });

  it('skips the build before a start when nothing changed since the last one', () => {
    // `npm run build` (run before the suites) stamped dist with the newest source it saw.
    expect(Number(readFileSync(join(ROOT, 'dist/.build-stamp'), 'utf8'))).toBeGreaterThan(0);
    const started = Date.now();
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts/build-if-stale.js')], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe('');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
