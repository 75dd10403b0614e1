import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

/**
 * A process's first read of a database while the event store is down (a worker starting during a
 * PostgreSQL restart, with a snapshot in its data directory): the read answers "unavailable", and
 * nothing escapes as an unhandled rejection, which ends a Node process. Run in a process of its own,
 * on the compiled code (`npm run build`), since Jest keeps unhandled rejections from ending its own.
 */
const SCRIPT = `
const { mkdtempSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { PostgresEventStore, SqliteEventStore } = require('./dist/libs/event-store/src');
const { CatalogProjection, Snapshots } = require('./dist/libs/projections/src');
(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'unreachable-'));
  const snapshots = new Snapshots({ dir: join(dir, 'snapshots'), every: 1, log: () => undefined });
  // A snapshot to restore from: reading it takes longer than the store takes to refuse.
  const written = new SqliteEventStore(join(dir, 'events.sqlite3'));
  const writer = new CatalogProjection(written, 'default', snapshots);
  for (let i = 0; i < 3; i++) {
    await written.append(writer.streamId, [{ type: 'NamespaceCreated', data: { namespace: ['n' + i], properties: {} } }], i === 0 ? 'no_stream' : i - 1);
  }
  await writer.catchUp();
  await new Promise((r) => setTimeout(r, 300));
  const port = await new Promise((done) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => done(p)); }); });
  const store = new PostgresEventStore('postgresql://postgres@127.0.0.1:' + port + '/postgres');
  const answer = await new CatalogProjection(store, 'default', snapshots).catchUp().then(() => 'caught up', (e) => e.constructor.name);
  await new Promise((r) => setTimeout(r, 300));
  await store.close();
  console.log(answer);
})();
`;

describe('a projection whose event store does not answer', () => {
  it('fails its first catch-up as unavailable, and the process lives on', () => {
    const run = spawnSync(process.execPath, ['-e', SCRIPT], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect({ status: run.status, out: run.stdout.trim(), err: run.stderr.slice(0, 600) }).toEqual({ status: 0, out: 'EventStoreUnavailableError', err: '' });
  });
});
