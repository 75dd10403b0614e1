#!/usr/bin/env node
// The operator's command (apps/cli): runs the built file, or says how to build it.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const built = join(__dirname, '..', 'dist', 'apps', 'cli', 'src', 'main.js');
if (!existsSync(built)) {
  console.error("lance-catalog: the command is not built yet; run 'npm run build' in " + join(__dirname, '..'));
  process.exit(2);
}
require(built);
