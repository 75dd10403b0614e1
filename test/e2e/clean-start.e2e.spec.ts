import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

  it('builds before a start only when a source changed since the last build', () => {
    // The real script in a project of its own, whose build only leaves a mark: the suite's own dist is never rebuilt.
    const project = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
    try {
      mkdirSync(join(project, 'scripts'));
      mkdirSync(join(project, 'apps'));
      mkdirSync(join(project, 'dist'));
      copyFileSync(join(ROOT, 'scripts/build-if-stale.js'), join(project, 'scripts/build-if-stale.js'));
      const build = "node -e \"require('fs').appendFileSync('dist/builds', 'x')\" && node scripts/build-if-stale.js --stamp";
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', private: true, scripts: { build } }));
      writeFileSync(join(project, 'apps/main.ts'), 'export {};');
      const start = () => spawnSync(process.execPath, [join(project, 'scripts/build-if-stale.js')], { cwd: project, encoding: 'utf8' });
      const builds = () => (existsSync(join(project, 'dist/builds')) ? readFileSync(join(project, 'dist/builds'), 'utf8').length : 0);

      expect(start().status).toBe(0);
      expect(builds()).toBe(1);
      // Nothing changed: no build, and nothing printed.
      const quiet = start();
      expect(quiet.status).toBe(0);
      expect(quiet.stdout + quiet.stderr).toBe('');
      expect(builds()).toBe(1);
      // A source newer than the stamp: built again.
      const later = new Date(Date.now() + 5000);
      utimesSync(join(project, 'apps/main.ts'), later, later);
      expect(start().status).toBe(0);
      expect(builds()).toBe(2);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
