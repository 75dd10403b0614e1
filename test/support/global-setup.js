// One directory per test run holds everything the tests and the servers they start put in the
// temporary directory (TMPDIR is what os.tmpdir() reads); global-teardown.js removes it.
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

module.exports = () => {
  process.env.TEST_RUN_TMPDIR = mkdtempSync(join(tmpdir(), 'lance-tests-'));
  process.env.TMPDIR = process.env.TEST_RUN_TMPDIR;
};
