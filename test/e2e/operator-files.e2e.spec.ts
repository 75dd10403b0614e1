import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { versionOfManifestName } from '@app/catalog';
import { arrowStream, sampleTable } from '../support/arrow-data';
import { TestDatabase, createTestDatabase } from '../support/postgres';
import { BuiltTable, countEveryVersion, lanceCatalog, replayDigests, writeCatalog } from '../support/operator';
import { RunningServer, startServer, tempDataDir } from '../support/server';

/**
 * `lance-catalog export`, `import`, `verify` and `recover` on a catalog the lancedb client wrote,
 * against the real server, the embedded store and PostgreSQL.
 */
describe('lance-catalog: export, import, verify, recover', () => {
  const SERVER_ENV = { MAINTENANCE_PLANNER: 'false' };
  let server: RunningServer;
  let dataDir: string;
  let tables: BuiltTable[];
  const databases: TestDatabase[] = [];
  const embedded = () => ({ EVENT_STORE: 'embedded', DATA_DIR: dataDir });
  const postgres = async () => {
    const db = await createTestDatabase('operator');
    databases.push(db);
    return db.url;
  };

  beforeAll(async () => {
    server = await startServer({ env: SERVER_ENV });
    dataDir = server.dataDir;
    tables = await writeCatalog(server.url, { namespaces: 2, tablesPerNamespace: 2, versionsPerTable: 5 });
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    for (const db of databases) await db.drop();
  });

  it('exports while the server runs and imports into an empty PostgreSQL store with the same digest; refuses a non-empty store and a damaged archive', async () => {
    const archive = join(dataDir, 'catalog.ndjson.gz');
    const exported = await lanceCatalog(['export', '--to', archive, '--json'], embedded());
    expect(exported.code).toBe(0);
    expect(exported.json).toMatchObject({ verb: 'export', events: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const target = await postgres();
    const imported = await lanceCatalog(['import', '--from', archive, '--json'], { EVENT_STORE: target, DATA_DIR: dataDir });
    expect(imported.code).toBe(0);
    expect(imported.json.events).toBe(exported.json.events);
    const digests = await replayDigests(embedded());
    expect(await replayDigests({ EVENT_STORE: target, DATA_DIR: dataDir })).toEqual(digests);
    expect(digests[0]).toMatchObject({ database: 'default', tables: 4 });

    const again = await lanceCatalog(['import', '--from', archive], { EVENT_STORE: target, DATA_DIR: dataDir });
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/already holds events/);

    // One event changed inside an archive that is otherwise whole: refused before anything is written.
    const lines = gunzipSync(readFileSync(archive)).toString('utf8').split('\n');
    lines[3] = lines[3].replace('"transactionId":"', '"transactionId":"X');
    const damaged = join(dataDir, 'damaged.ndjson.gz');
    writeFileSync(damaged, gzipSync(lines.join('\n')));
    const empty = await postgres();
    const refused = await lanceCatalog(['import', '--from', damaged], { EVENT_STORE: empty, DATA_DIR: dataDir });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/checksum/);
    // Cut short: the trailer is gone.
    writeFileSync(damaged, gzipSync(lines.slice(0, 5).join('\n')));
    expect((await lanceCatalog(['import', '--from', damaged], { EVENT_STORE: empty, DATA_DIR: dataDir })).code).toBe(4);
    expect(await replayDigests({ EVENT_STORE: empty, DATA_DIR: dataDir })).toEqual([]);

    // Mistakes of the environment or the names, refused before anything is made or replaced.
    const typo = join(dataDir, 'no-such-catalog');
    for (const args of [['export', '--to', join(dataDir, 'other.ndjson.gz')], ['verify'], ['migrate', '--to', empty]]) {
      const wrongDir = await lanceCatalog(args, { EVENT_STORE: 'embedded', DATA_DIR: typo });
      expect({ args, code: wrongDir.code }).toEqual({ args, code: 2 });
      expect(wrongDir.stderr).toMatch(/there is no embedded event store at .*no-such-catalog\/events\.sqlite3/);
    }
    expect(readdirSync(dataDir)).not.toContain('no-such-catalog');
    const before = readFileSync(archive);
    const overwrite = await lanceCatalog(['export', '--to', archive], embedded());
    expect([overwrite.code, overwrite.stderr.includes('exists already')]).toEqual([2, true]);
    expect(readFileSync(archive).equals(before)).toBe(true);
    const fromDir = await lanceCatalog(['import', '--from', dataDir], { EVENT_STORE: target, DATA_DIR: dataDir });
    expect([fromDir.code, fromDir.stderr]).toEqual([2, expect.stringMatching(/is not a file/)]);
    expect(fromDir.stderr).not.toMatch(/\n\s+at /);
    const fromNothing = await lanceCatalog(['import', '--from', join(dataDir, 'nothing.gz')], { EVENT_STORE: target, DATA_DIR: dataDir });
    expect([fromNothing.code, fromNothing.stderr]).toEqual([2, expect.stringMatching(/there is no archive at/)]);
  }, 60_000);

  it('recovers the catalog from the warehouse alone: the client reads every table at every version', async () => {
    // A namespace whose folder starts with '_' (as `_staging` does, or `école`, written `_cole`) is one, not Lance's.
    expect((await fetch(`${server.url}/v1/namespace/_staging/create`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(200);
    const staged = await fetch(`${server.url}/v1/table/_staging%24t/create`, { method: 'POST', headers: { 'content-type': 'application/vnd.apache.arrow.stream' }, body: arrowStream(sampleTable(0, 3)) });
    expect(staged.status).toBe(200);
    const store = await postgres();
    const recoveredDir = tempDataDir();
    const env = { EVENT_STORE: store, DATA_DIR: recoveredDir, WAREHOUSE: join(dataDir, 'warehouse') };
    const recovered = await lanceCatalog(['recover', '--from-warehouse', '--json'], env);
    expect(recovered.code).toBe(0);
    expect(recovered.json).toMatchObject({ databases: 1, namespaces: 3, tables: 5, branches: 2, tags: 2 });
    expect((await lanceCatalog(['recover', '--from-warehouse'], env)).code).toBe(3);

    const second = await startServer({ env: { ...SERVER_ENV, ...env } });
    try {
      const counts = await countEveryVersion(second.url, tables);
      expect(counts.length).toBeGreaterThan(20);
      expect(counts.filter((c) => c.counted !== c.expected)).toEqual([]);
      const history = await fetch(`${second.url}/v1/table/ns0%24t0/version/list`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(((await history.json()) as { versions: unknown[] }).versions).toHaveLength(tables[0].rowsAt.size);
      // The recovered catalog is whole by verify's measure too.
      const verified = await lanceCatalog(['verify', '--json'], env);
      expect(verified.json.found ?? []).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('verifies a healthy catalog, then reports each of five injected faults exactly once, deleting nothing', async () => {
    const healthy = await lanceCatalog(['verify', '--json'], embedded());
    expect(healthy.json.found).toEqual([]);
    expect(healthy.code).toBe(0);
    await server.stop();

    const [withIndex, plain, other, second] = [tables[0], tables[1], tables[2], tables[3]];
    // 1. A manifest deleted by hand: version 2 of a table.
    const manifests = join(plain.location, '_versions');
    const v2 = readdirSync(manifests).find((f) => versionOfManifestName(f)?.version === 2)!;
    rmSync(join(manifests, v2));
    // 2. A whole table folder.
    rmSync(second.location, { recursive: true });
    // 3. An index's files.
    const indices = join(withIndex.location, '_indices');
    for (const uuid of readdirSync(indices)) rmSync(join(indices, uuid), { recursive: true });
    // 4. A tag's file.
    rmSync(join(other.location, '_refs', 'tags', 'first.json'));
    // 5. A folder nothing in the catalog accounts for.
    const orphan = join(dataDir, 'warehouse', 'default', 'ns0', 'copied-by-hand.lance');
    mkdirSync(join(orphan, '_versions'), { recursive: true });

    const found = await lanceCatalog(['verify', '--json'], embedded());
    expect(found.code).toBe(1);
    const kinds = found.json.found.map((f: { kind: string }) => f.kind).sort();
    expect(kinds).toEqual(['index-files', 'missing-location', 'missing-manifest', 'orphan-folder', 'tag']);
    const by = (kind: string) => found.json.found.find((f: { kind: string }) => f.kind === kind);
    expect(by('missing-manifest')).toMatchObject({ table: 'ns0$t1', location: join(manifests, v2) });
    expect(by('missing-location')).toMatchObject({ table: 'ns1$t1' });
    expect(by('index-files')).toMatchObject({ table: 'ns0$t0' });
    expect(by('tag')).toMatchObject({ table: 'ns1$t0' });
    expect(by('orphan-folder').location).toBe(orphan);
    for (const f of found.json.found) expect(f.action).toEqual(expect.any(String));
    // Findings are reported, never repaired.
    expect(readdirSync(join(dataDir, 'warehouse', 'default', 'ns0'))).toContain('copied-by-hand.lance');

    const text = await lanceCatalog(['verify'], embedded());
    expect(text.stdout.split('\n').filter((l) => /^(missing-|index-|tag|orphan-|branch|manifest-)/.test(l))).toHaveLength(5);

    // The log itself damaged, on a copy: an event gone, and one whose type no catalog writes.
    const damaged = join(dataDir, 'damaged-log');
    mkdirSync(damaged);
    for (const file of readdirSync(dataDir).filter((f) => f.startsWith('events.sqlite3'))) copyFileSync(join(dataDir, file), join(damaged, file));
    const db = new Database(join(damaged, 'events.sqlite3'));
    db.prepare("DELETE FROM events WHERE stream_id = 'catalog-default' AND revision = 4").run();
    db.prepare("UPDATE events SET type = 'NoSuchEvent' WHERE stream_id = 'catalog-default' AND revision = 6").run();
    db.close();
    const gaps = await lanceCatalog(['verify', '--json'], { EVENT_STORE: 'embedded', DATA_DIR: damaged, WAREHOUSE: join(dataDir, 'warehouse') });
    expect(gaps.code).toBe(1);
    const logFindings = gaps.json.found.filter((f: { kind: string }) => f.kind === 'log-gap' || f.kind === 'unknown-event');
    expect(logFindings.map((f: { kind: string; problem: string }) => [f.kind, f.problem.slice(0, 40)])).toEqual([
      ['log-gap', 'revision 5 follows revision 3: events ar'],
      ['unknown-event', 'the event at revision 6 has a type no ve'],
    ]);
  }, 60_000);
});
