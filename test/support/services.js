// The Redis and PostgreSQL a test run uses, started by global-setup.js from Debian's binaries on
// free ports, with their files under the run's temporary directory, and stopped by
// global-teardown.js. Plain JavaScript: Jest runs these files as they are.
const { execFile, spawn } = require('node:child_process');
const { chownSync, chmodSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } = require('node:fs');
const { createConnection, createServer } = require('node:net');
const { join } = require('node:path');
const { promisify } = require('node:util');

const PROVISION = 'scripts/provision-test-packages.sh installs it';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once `ready()` does, rejecting with the service's log once `child` exits or `ms` pass. */
async function whenReady(name, child, log, ready, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited before it served:\n${tail(log)}`);
    if (await ready().then(() => true, () => false)) return;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not serve within ${ms / 1000} s:\n${tail(log)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const tail = (file) => (existsSync(file) ? readFileSync(file, 'utf8').slice(-2000) : '');

/** A service this run started: its URL, and how to stop it. */
function running(url, child, stopSignal) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill(stopSignal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function redisPing(port) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.setTimeout(1000, () => socket.destroy(new Error('no answer')));
    socket.once('error', reject);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      if (String(d).startsWith('+PONG')) resolve();
      else reject(new Error(String(d)));
    });
  });
}

/**
 * redis-server on a free port, keeping nothing on disk; or, with `port` and `persist` (what the
 * soak run restarts), on that port with an append-only file in `dir`, so a restart keeps the queues.
 */
async function startRedis(dir, { port: fixedPort, persist = false } = {}) {
  const bin = 'redis-server';
  mkdirSync(dir, { recursive: true });
  const port = fixedPort ?? (await freePort());
  const log = join(dir, 'redis.log');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', persist ? 'yes' : 'no', '--dir', dir, '--logfile', log];
  const child = spawn(bin, args, { stdio: 'ignore' });
  const spawned = await new Promise((resolve) => {
    child.once('spawn', () => resolve(true));
    child.once('error', () => resolve(false));
  });
  if (!spawned) throw new Error(`the tests start a Redis of their own with ${bin}, which is not installed (${PROVISION}); or set TEST_REDIS_URL to use yours`);
  await whenReady('redis-server', child, log, () => redisPing(port));
  return running(`redis://127.0.0.1:${port}`, child, 'SIGTERM');
}

/** The newest PostgreSQL under /usr/lib/postgresql (Debian's layout). */
function postgresBin() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error(`the tests start a PostgreSQL of their own from ${root}/<version>/bin, and none is installed (${PROVISION}); or set PG_TEST_URL to use yours`);
  return join(root, versions[0], 'bin');
}

/** PostgreSQL refuses to run as root: as root, its files and processes belong to the `postgres` user. */
function postgresUser() {
  if (process.getuid() !== 0) return {};
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === 'postgres');
  if (!entry) throw new Error('running as root, the tests need a `postgres` user to run PostgreSQL as (the postgresql package makes it)');
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/**
 * A fresh cluster (initdb, trust authentication) served on a free port; its socket stays in its
 * directory. Given the `port` of a cluster already made in `dir`, starts that one again on it.
 */
async function startPostgres(dir, { port: fixedPort } = {}) {
  const bin = postgresBin();
  const user = postgresUser();
  const data = join(dir, 'data');
  if (!existsSync(join(data, 'PG_VERSION'))) {
    mkdirSync(data, { recursive: true, mode: 0o700 });
    if (user.uid !== undefined) {
      chownSync(dir, user.uid, user.gid);
      chownSync(data, user.uid, user.gid);
    }
    await promisify(execFile)(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C'], user).catch((e) => {
      throw new Error(`initdb failed: ${e.stderr || e.message}`);
    });
  }
  const port = fixedPort ?? (await freePort());
  const log = join(dir, 'postgresql.log');
  const out = openSync(log, 'a');
  if (user.uid !== undefined) chownSync(log, user.uid, user.gid);
  // A test server: nothing here must survive a crash, so nothing is synced.
  const settings = { listen_addresses: '127.0.0.1', port, unix_socket_directories: dir, fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: 300 };
  const args = ['-D', data, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const child = spawn(join(bin, 'postgres'), args, { ...user, stdio: ['ignore', out, out] });
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const { Client } = require('pg');
  await whenReady('postgres', child, log, async () => {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    await client.connect();
    await client.end();
  });
  // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients to leave.
  return running(url, child, 'SIGINT');
}

/** Lets a service running as another user reach its directory under the run's own (mkdtemp makes it 0700). */
function traversable(dir) {
  chmodSync(dir, 0o711);
}

module.exports = { startRedis, startPostgres, traversable };
