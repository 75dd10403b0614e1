import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@app/event-store';
import { ManifestJournal } from '../src';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Journaled manifests are synced and released once they are old enough for the kernel to have written them back. */
describe('manifest journal flushes', () => {
  let dir: string;
  let store: SqliteEventStore;
  let revision: number | 'no_stream';

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'manifest-journal-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite3'));
    revision = 'no_stream';
  });
  afterEach(() => store.close());

  /** A manifest written on disk and journaled with an event, as a commit does. */
  const commit = async (name: string) => {
    const path = join(dir, name);
    writeFileSync(path, name);
    revision = (await store.append('catalog-default', [{ type: 'TableVersionCreated', data: {} }], revision, { files: [{ path, bytes: Buffer.from(name) }] }))
      .nextExpectedRevision;
  };
  const pending = async () => (await store.journal.pendingPaths(100)).map((f) => f.path.slice(dir.length + 1));
  const journal = (syncAgeMs: number, maxPendingBytes = 1 << 20) =>
    new ManifestJournal(store.journal, { flushMs: 60_000, syncAgeMs, maxPendingBytes, onError: (e) => { throw e; } });

  it('keeps a manifest until a look at least the sync age ago saw it, then syncs and releases it', async () => {
    const manifests = journal(300);
    await commit('a');
    await manifests.flush();
    expect(await pending()).toEqual(['a']);
    await commit('b');
    await pause(350);
    await manifests.flush();
    // `b` came after the first look: its age is not known to have passed.
    expect(await pending()).toEqual(['b']);
    await pause(350);
    await manifests.flush();
    expect(await pending()).toEqual([]);
  });

  it('with a sync age of 0 releases everything at the next flush', async () => {
    const manifests = journal(0);
    await commit('a');
    await commit('b');
    await manifests.flush();
    expect(await pending()).toEqual([]);
  });

  it('syncs the oldest past the bound on pending bytes, whatever their age', async () => {
    const manifests = journal(60_000, 5);
    // Two bytes each: ten pending, five over the bound, so the three oldest go.
    for (const name of ['a1', 'b2', 'c3', 'd4', 'e5']) await commit(name);
    expect(await store.journal.pendingBytes()).toBe(10);
    await manifests.flush();
    expect(await pending()).toEqual(['d4', 'e5']);
    expect(await store.journal.pendingBytes()).toBe(4);
  });

  it('releases everything when it stops, and ids are never reused once all are released', async () => {
    const manifests = journal(60_000);
    await commit('a');
    await commit('b');
    const newest = await store.journal.newestId();
    await manifests.stop();
    expect(await pending()).toEqual([]);
    expect(await store.journal.newestId()).toBe(newest);
    await commit('c');
    expect((await store.journal.pendingPaths(10))[0].id).toBe(newest + 1);
  });
});
