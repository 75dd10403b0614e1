const { rmSync } = require('node:fs');

module.exports = () => {
  if (process.env.TEST_RUN_TMPDIR) rmSync(process.env.TEST_RUN_TMPDIR, { recursive: true, force: true });
};
