import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startRgw } from '../test/support/rgw';
import { startServer } from './support';

/**
 * The catalog as `npm start` runs it (the built standalone process, no authentication), with an
 * RGW warehouse and CLIENT_CREDENTIALS=sts, used by the two clients the Lance project ships for
 * its REST namespace, each given only the catalog's URL and no AWS variable: the lancedb client
 * (test/support/client-scenario.js) and the generated Python client (scripts/python-client/
 * scenario.py, which also puts every credential it was handed to the store).
 *
 * The Python client is not on the npm registry nor in Debian, so it is not in `npm test`: give
 * this script either LANCE_NAMESPACE_PYTHON_CLIENT, a directory holding the
 * `lance_namespace_urllib3_client` package, or LANCE_NAMESPACE_REPO, a git directory of
 * lance-format/lance-namespace, from which python/lance_namespace_urllib3_client is extracted into
 * a cache directory named by its commit. python3 needs pydantic 2, urllib3 and python-dateutil.
 */
const ROOT = resolve(__dirname, '../..');
const SESSION_SECONDS = Number(process.env.PYTHON_STS_SESSION_SECONDS ?? 20);
const BUCKET = 'warehouse';

function pythonClient(): string {
  const given = process.env.LANCE_NAMESPACE_PYTHON_CLIENT;
  if (given) return resolve(given);
  const repo = process.env.LANCE_NAMESPACE_REPO;
  if (!repo) throw new Error('set LANCE_NAMESPACE_PYTHON_CLIENT (a directory holding lance_namespace_urllib3_client) or LANCE_NAMESPACE_REPO (a git directory of lance-format/lance-namespace)');
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', repo, ...args], { maxBuffer: 256 * 1024 * 1024 });
  const commit = git('rev-parse', 'HEAD').toString().trim();
  const dir = join(tmpdir(), `lance-namespace-python-${commit}`);
  const target = join(dir, 'python/lance_namespace_urllib3_client');
  if (!existsSync(join(target, 'lance_namespace_urllib3_client/__init__.py'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-x', '-C', dir], { input: git('archive', commit, 'python/lance_namespace_urllib3_client') });
  }
  return target;
}

/** Runs a client process without AWS variables, echoing its output; resolves with its exit code and output. */
function run(command: string, args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_'))), ...extraEnv };
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    process.stdout.write(d);
  });
  child.stderr.on('data', (d) => process.stderr.write(d));
  return new Promise((done) => child.once('exit', (code) => done({ code, out })));
}

async function main(): Promise<void> {
  const clientDir = pythonClient();
  const rgw = await startRgw({ minSessionSeconds: 5 });
  await rgw.createBucket(BUCKET);
  const server = await startServer({
    ...rgw.awsEnv(),
    WAREHOUSE: `s3://${BUCKET}/lance`,
    CLIENT_CREDENTIALS: 'sts',
    STS_ROLE_ARN: rgw.roleArn,
    VENDED_CREDENTIALS_SECONDS: String(SESSION_SECONDS),
  });
  let failed = false;
  try {
    console.log(`catalog ${server.url}, warehouse s3://${BUCKET}/lance on RGW ${rgw.endpoint}, CLIENT_CREDENTIALS=sts, VENDED_CREDENTIALS_SECONDS=${SESSION_SECONDS}`);
    console.log('\n== lancedb client (test/support/client-scenario.js)');
    const lance = await run(process.execPath, [join(ROOT, 'test/support/client-scenario.js'), server.url, '', 'lancedb_shop']);
    failed ||= lance.code !== 0 || lance.out.includes('"error"');
    console.log(`\n== generated Python client (${clientDir})`);
    const python = await run('python3', [join(ROOT, 'scripts/python-client/scenario.py'), server.url, String(SESSION_SECONDS)], { PYTHONPATH: clientDir });
    failed ||= python.code !== 0;
  } finally {
    await server.stop();
    await rgw.stop();
  }
  if (failed) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
