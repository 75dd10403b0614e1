// One directory per test run holds everything the tests and the servers they start put in the
// temporary directory (TMPDIR is what os.tmpdir() reads); global-teardown.js removes it.
// The run's own Redis and PostgreSQL are started here (see services.js), unless TEST_REDIS_URL or
// PG_TEST_URL names one to use instead; suites and the servers they start read REDIS_URL and
// PG_TEST_URL, which is what this sets.
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { startPostgres, startRedis, traversable } = require('./services');

module.exports = async () => {
  const run = mkdtempSync(join(tmpdir(), 'lance-tests-'));
  process.env.TEST_RUN_TMPDIR = run;
  process.env.TMPDIR = run;
  const started = (globalThis.__testServices = []);
  const own = async (start) => {
    const service = await start();
    started.push(service);
    return service.url;
  };
  traversable(run);
  const [redis, postgres] = await Promise.allSettled([
    process.env.TEST_REDIS_URL || own(() => startRedis(join(run, 'redis'))),
    process.env.PG_TEST_URL || own(() => startPostgres(join(run, 'postgresql'))),
  ]);
  const failed = [redis, postgres].find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((s) => s.stop()));
    throw failed.reason;
  }
  process.env.REDIS_URL = redis.value;
  process.env.PG_TEST_URL = postgres.value;
};
