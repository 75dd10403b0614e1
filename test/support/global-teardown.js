const { rmSync } = require('node:fs');

module.exports = async () => {
  await Promise.all((globalThis.__testServices ?? []).map((service) => service.stop()));
  if (process.env.TEST_RUN_TMPDIR) rmSync(process.env.TEST_RUN_TMPDIR, { recursive: true, force: true });
};
