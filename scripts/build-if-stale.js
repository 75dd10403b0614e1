#!/usr/bin/env node
// `npm start` and friends build first only when a source changed since the last build: the build
// records the newest source time it saw in dist/.build-stamp, and a start compares against it.
// `--stamp` (the last step of `npm run build`) only records it.
const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const stampFile = join(root, 'dist', '.build-stamp');
const SOURCES = ['apps', 'libs', 'bench', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const SKIPPED = new Set(['node_modules', 'dist', 'test']);

function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) if (!SKIPPED.has(entry)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const sourcesAt = Math.max(...SOURCES.map((s) => newest(join(root, s))));
if (process.argv.includes('--stamp')) {
  writeFileSync(stampFile, String(sourcesAt));
  process.exit(0);
}
const built = existsSync(stampFile) ? Number(readFileSync(stampFile, 'utf8')) : -1;
if (built >= sourcesAt) process.exit(0);
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(build.status ?? 1);
