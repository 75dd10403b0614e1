import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogEvent, CatalogState, finalManifestName } from '@app/catalog';
import { NewEvent, SqliteEventStore } from '@app/event-store';
import { CatalogProjection, Snapshots, digestOf } from '../src';

const STREAM = 'catalog-default';

/** A real embedded store in a fresh directory, with a varied catalog log of `count` events. */
async function logOf(count: number, seed = 0): Promise<{ dir: string; store: SqliteEventStore; append: (n: number) => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'snapshots-'));
  const store = new SqliteEventStore(join(dir, 'events.sqlite3'));
  let written = 0;
  const append = async (n: number) => {
    const events: NewEvent[] = [];
    for (let i = written; i < written + n; i++) events.push(eventAt(i, seed));
    await store.append(STREAM, events, written === 0 ? 'no_stream' : written - 1);
    written += n;
  };
  await append(count);
  return { dir, store, append };
}

/** Namespaces, tables, versions (some with eTags or odd paths), renames, index requests, alterations. */
function eventAt(i: number, seed: number): NewEvent {
  const table = ['ns', `t${i % 7}`];
  const location = `/wh/default/ns/t${i % 7}.lance`;
  const meta = { transactionId: i % 9 === 4 ? `tx-${seed}-${i}` : randomUUID(), operation: `Op${i % 3}`, occurredAt: i % 8 === 3 ? `day ${i}` : new Date(1_700_000_000_000 + i).toISOString() };
  let event: CatalogEvent;
  if (i === 0) event = { type: 'NamespaceCreated', data: { namespace: ['ns'], properties: { seed: String(seed) } } };
  else if (i < 8) event = { type: 'TableDeclared', data: { table, tableUuid: `u${i % 7}`, location, properties: {}, managedVersioning: true } };
  else if (i % 11 === 0) {
    event = { type: 'TableIndexRequested', data: { table, tableUuid: `u${i % 7}`, indexName: `i${i}`, columns: ['c'], indexType: 'BTREE', params: { n: i } } };
  } else if (i % 13 === 0) {
    event = { type: 'TransactionAltered', data: { transactionId: 'unknown', status: 'Running', setProperties: { k: 'v' }, unsetProperties: [] } };
  } else {
    const version = i;
    const manifestPath = i % 5 === 0 ? `elsewhere/${i}.manifest` : `wh/default/ns/t${i % 7}.lance/_versions/${finalManifestName(version, 'V2')}`;
    event = { type: 'TableVersionCreated', data: { table, tableUuid: `u${i % 7}`, version, manifestPath, namingScheme: 'V2', timestampMillis: i, ...(i % 4 === 0 ? { eTag: `e${i}` } : {}) } };
  }
  return { type: event.type, data: event.data, metadata: meta };
}

function snapshotsIn(dir: string, every = 1_000_000) {
  const messages: string[] = [];
  const snapshots = new Snapshots({ dir: join(dir, 'snapshots'), every, log: (m) => messages.push(m) });
  return { snapshots, messages };
}

/** The state folded from the whole log, with no snapshot anywhere near it. */
async function foldedFromScratch(store: SqliteEventStore): Promise<CatalogState> {
  const projection = new CatalogProjection(store, 'default');
  await projection.catchUp();
  return projection.state;
}

async function startedWith(store: SqliteEventStore, snapshots: Snapshots): Promise<CatalogState> {
  const projection = new CatalogProjection(store, 'default', snapshots);
  await projection.catchUp();
  return projection.state;
}

/** Writes a snapshot of the whole log as it is now (what a graceful shutdown does). */
async function snapshotAtHead(store: SqliteEventStore, snapshots: Snapshots): Promise<void> {
  const projection = new CatalogProjection(store, 'default', snapshots);
  await projection.catchUp();
  await projection.close();
}

describe('state images', () => {
  it('a state rebuilt from its image has the same digest and answers the same', async () => {
    const { store } = await logOf(300);
    const state = await foldedFromScratch(store);
    const copy = CatalogState.fromImage(state.toImage());
    expect(digestOf(copy)).toBe(digestOf(state));
    expect(copy.table(['ns', 't3'])!.versions.values()).toEqual(state.table(['ns', 't3'])!.versions.values());
    expect(copy.table(['ns', 't0'])!.indexes).toEqual(state.table(['ns', 't0'])!.indexes);
    expect(copy.tableAtLocation('/wh/default/ns/t2.lance')!.id).toEqual(['ns', 't2']);
    expect(copy.childTables(['ns']).toArray()).toEqual(state.childTables(['ns']).toArray());
    // It keeps folding like the original.
    const copyAgain = CatalogState.fromImage(copy.toImage());
    expect(digestOf(copyAgain)).toBe(digestOf(state));
    await store.close();
  });
});

describe('snapshots', () => {
  it('a start with a snapshot folds only what came after it and ends at the same digest as the log alone', async () => {
    const { dir, store, append } = await logOf(200);
    const { snapshots, messages } = snapshotsIn(dir);
    await snapshotAtHead(store, snapshots);
    expect(existsSync(snapshots.fileOf('default'))).toBe(true);
    await append(50);

    const restored = await startedWith(store, snapshots);
    expect(messages).toContain("restored 'default' from its snapshot at revision 199");
    expect(restored.revision).toBe(249);
    expect(digestOf(restored)).toBe(digestOf(await foldedFromScratch(store)));
    await store.close();
  });

  it('writes a snapshot on its own every so many events, and one more at shutdown', async () => {
    const { dir, store, append } = await logOf(30);
    const { snapshots, messages } = snapshotsIn(dir, 25);
    const projection = new CatalogProjection(store, 'default', snapshots);
    await projection.catchUp();
    for (let i = 0; i < 100 && !messages.some((m) => /at revision 29 written/.test(m)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(messages.some((m) => /snapshot of 'default' at revision 29 written/.test(m))).toBe(true);
    await append(10);
    await projection.catchUp();
    await projection.close();
    expect(messages.some((m) => /at revision 39 written/.test(m))).toBe(true);
    const restored = await startedWith(store, snapshotsIn(dir).snapshots);
    expect(restored.revision).toBe(39);
    expect(digestOf(restored)).toBe(digestOf(projection.state));
    await store.close();
  });

  describe('a snapshot that cannot be trusted is ignored and the log is folded from the start', () => {
    async function expectIgnored(damage: (file: string) => void, reason: RegExp, other?: { dir: string; store: SqliteEventStore }) {
      const log = await logOf(120);
      const { snapshots } = snapshotsIn(log.dir);
      await snapshotAtHead(log.store, snapshots);
      damage(snapshots.fileOf('default'));
      const target = other ?? log;
      const { snapshots: reading, messages } = snapshotsIn(target.dir);
      const state = await startedWith(target.store, reading);
      expect(messages.some((m) => /^restored/.test(m))).toBe(false);
      expect(messages.join('\n')).toMatch(reason);
      expect(digestOf(state)).toBe(digestOf(await foldedFromScratch(target.store)));
      await log.store.close();
    }

    it('missing', async () => {
      const { dir, store } = await logOf(40);
      const { snapshots, messages } = snapshotsIn(dir);
      const state = await startedWith(store, snapshots);
      expect(messages).toEqual([]);
      expect(state.revision).toBe(39);
      await store.close();
    });

    it('corrupt', () =>
      expectIgnored((file) => {
        const bytes = readFileSync(file);
        const at = bytes.length - 100;
        bytes[at] ^= 0xff;
        writeFileSync(file, bytes);
      }, /checksum mismatch/));

    it('truncated', () => expectIgnored((file) => truncateSync(file, Math.floor(readFileSync(file).length / 2)), /truncated/));

    it('not a snapshot at all', () => expectIgnored((file) => writeFileSync(file, 'hello'), /no header/));

    it('written in an older format', () =>
      expectIgnored((file) => {
        const bytes = readFileSync(file);
        const newline = bytes.indexOf(10);
        const header = JSON.parse(bytes.subarray(0, newline).toString());
        writeFileSync(file, Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, version: 0 })}\n`), bytes.subarray(newline + 1)]));
      }, /snapshot version 0/));

    it('beyond the head of the stream (the log was replaced by a shorter one)', async () => {
      const shorter = await logOf(60, 1);
      await expectIgnored((file) => {
        mkdirSync(join(shorter.dir, 'snapshots'), { recursive: true });
        copyFileSync(file, join(shorter.dir, 'snapshots', 'default.snapshot'));
      }, /beyond the stream's head/, shorter);
      await shorter.store.close();
    });

    it('the log was replaced by another one at least as long', async () => {
      const other = await logOf(150, 2);
      await expectIgnored((file) => {
        mkdirSync(join(other.dir, 'snapshots'), { recursive: true });
        copyFileSync(file, join(other.dir, 'snapshots', 'default.snapshot'));
      }, /another event at revision 119 \(log replaced\)/, other);
      await other.store.close();
    });
  });
});
