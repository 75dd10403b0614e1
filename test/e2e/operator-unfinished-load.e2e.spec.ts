import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LOAD_STREAM, SqliteEventStore, embeddedStoreFile } from '@app/event-store';
import { catalogStreamOf } from '@app/projections';
import { Api } from '../support/http';
import { lanceCatalog } from '../support/operator';
import { createTestDatabase } from '../support/postgres';
import { startServer, tempDataDir } from '../support/server';

const NAMESPACES = 20_000;
const ROOT = resolve(__dirname, '../..');

/** A catalog of NAMESPACES namespaces written straight to an embedded store: an archive whose import takes a while. */
async function writeLargeCatalog(dataDir: string): Promise<void> {
  const store = new SqliteEventStore(embeddedStoreFile(dataDir));
  try {
    for (let i = 0; i < NAMESPACES; i += 1000) {
      const events = Array.from({ length: 1000 }, (_, j) => ({
        type: 'NamespaceCreated',
        data: { namespace: [`n${i + j}`], properties: {} },
        metadata: { transactionId: randomUUID(), operation: 'CreateNamespace', occurredAt: new Date().toISOString() },
      }));
      await store.append(catalogStreamOf('default'), events, i === 0 ? 'no_stream' : i - 1);
    }
  } finally {
    await store.close();
  }
}

/** Runs `lance-catalog import` into `dataDir` and kills it (SIGKILL) once part of the archive is in the store. */
async function importKilledPartWay(archive: string, dataDir: string): Promise<number> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/lance-catalog.js'), 'import', '--from', archive], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', EVENT_STORE: 'embedded', DATA_DIR: dataDir },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const file = embeddedStoreFile(dataDir);
  let loaded = 0;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && child.exitCode === null; ) {
    if (existsSync(file)) {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        loaded = (db.prepare('SELECT count(*) AS n FROM events WHERE stream_id != ?').get(LOAD_STREAM) as { n: number }).n;
      } catch {
        // The importer is creating the tables.
      } finally {
        db.close();
      }
      if (loaded > 0) break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  child.kill('SIGKILL');
  await exited;
  return loaded;
}

/**
 * An operator's load (import, recover, migrate's target) that dies part way leaves a store holding
 * part of a catalog: no server starts on it, the next import says what to do, and verify reports it.
 */
describe('lance-catalog: a load that did not finish', () => {
  it('stops a server on a store an import did not finish and refuses to start one, says so to the next import, to verify, export and migrate; a finished import serves', async () => {
    const source = tempDataDir();
    await writeLargeCatalog(source);
    const archive = join(source, 'catalog.ndjson.gz');
    expect((await lanceCatalog(['export', '--to', archive], { EVENT_STORE: 'embedded', DATA_DIR: source })).code).toBe(0);

    // A server already running on the empty store the import fills stops once it sees the load unfinished.
    const cut = tempDataDir();
    const early = await startServer({ dataDir: cut, env: { MAINTENANCE_PLANNER: 'false' } });
    const earlyExit = new Promise<number | null>((done) => early.process.once('exit', (code) => done(code)));
    const loaded = await importKilledPartWay(archive, cut);
    expect(loaded).toBeGreaterThan(0);
    expect(loaded).toBeLessThan(NAMESPACES);
    expect(await earlyExit).toBe(1);
    expect(early.output()).toMatch(/'lance-catalog import', begun .*, did not finish loading it/);

    const started = startServer({ dataDir: cut, env: { MAINTENANCE_PLANNER: 'false' } });
    await expect(started).rejects.toThrow(/'lance-catalog import', begun .*, did not finish loading it/);
    const again = await lanceCatalog(['import', '--from', archive], { EVENT_STORE: 'embedded', DATA_DIR: cut });
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/holds part of a catalog: 'lance-catalog import', begun .*, did not finish loading it\. Empty the store/);
    const verify = await lanceCatalog(['verify'], { EVENT_STORE: 'embedded', DATA_DIR: cut, WAREHOUSE: join(cut, 'warehouse') });
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/^unfinished-load: .*did not finish loading this event store/m);
    // Nor is it copied elsewhere as if whole, where the copy would look finished.
    const exported = await lanceCatalog(['export', '--to', join(cut, 'part.ndjson.gz')], { EVENT_STORE: 'embedded', DATA_DIR: cut });
    expect([exported.code, exported.stderr]).toEqual([3, expect.stringMatching(/is not a whole catalog: .*'lance-catalog import'.* did not finish loading it/)]);
    const target = await createTestDatabase('unfinished');
    try {
      const migrated = await lanceCatalog(['migrate', '--to', target.url], { EVENT_STORE: 'embedded', DATA_DIR: cut });
      expect([migrated.code, migrated.stderr]).toEqual([3, expect.stringMatching(/is not a whole catalog/)]);
    } finally {
      await target.drop();
    }
    // Still unfinished after those attempts.
    await expect(startServer({ dataDir: cut, env: { MAINTENANCE_PLANNER: 'false' } })).rejects.toThrow(/did not finish loading it/);

    const whole = tempDataDir();
    const imported = await lanceCatalog(['import', '--from', archive, '--json'], { EVENT_STORE: 'embedded', DATA_DIR: whole });
    expect(imported.code).toBe(0);
    expect(imported.json.events).toBe(NAMESPACES);
    const server = await startServer({ dataDir: whole, env: { MAINTENANCE_PLANNER: 'false' } });
    try {
      const api = new Api(server.url);
      expect((await api.post(`/v1/namespace/n${NAMESPACES - 1}/describe`, {})).status).toBe(200);
      expect((await api.post('/v1/namespace/after-import/create', {})).status).toBe(200);
    } finally {
      await server.stop();
    }
  }, 180_000);
});
