import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJournal, SqliteEventStore } from '@app/event-store';
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
  const pendingBytes = async () => (await store.journal.pendingPaths(100)).reduce((n, f) => n + f.size, 0);
  const journal = (syncAgeMs: number, maxPendingBytes = 1 << 20, files: FileJournal = store.journal) =>
    new ManifestJournal(files, { flushMs: 60_000, syncAgeMs, maxPendingBytes, onError: (e) => { throw e; } });

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
    expect(await pendingBytes()).toBe(10);
    await manifests.flush();
    expect(await pending()).toEqual(['d4', 'e5']);
    expect(await pendingBytes()).toBe(4);
    // Counted once: the next flush finds the two left under the bound and two new ones over it.
    await commit('f6');
    await commit('g7');
    await manifests.flush();
    expect(await pending()).toEqual(['f6', 'g7']);
  });

  it('reads only the rows recorded since its last look, and none when nothing is due', async () => {
    const asked: Array<number | undefined> = [];
    const watched: FileJournal = { ...store.journal, pendingPaths: (limit, afterId) => (asked.push(afterId), store.journal.pendingPaths(limit, afterId)) };
    const manifests = journal(60_000, 1 << 20, watched);
    await commit('a');
    await commit('b');
    await manifests.flush();
    const [a, b] = (await store.journal.pendingPaths(10)).map((f) => f.id);
    // Counted from the start, and nothing due: no read of the oldest rows to sync.
    expect(asked).toEqual([0]);
    await commit('c');
    await manifests.flush();
    expect(asked).toEqual([0, b]);
    expect(await pending()).toEqual(['a', 'b', 'c']);
    expect(a).toBeLessThan(b);
  });

  it('counts as gone what another process sharing the store released', async () => {
    const here = journal(60_000, 4);
    const elsewhere = journal(0);
    for (const name of ['a1', 'b2']) await commit(name);
    // Four bytes pending, at the bound: nothing due here.
    await here.flush();
    expect(await pending()).toEqual(['a1', 'b2']);
    await elsewhere.flush();
    expect(await pending()).toEqual([]);
    // Here still counted a1 and b2: with them, c3 and d4 would seem over the bound.
    for (const name of ['c3', 'd4']) await commit(name);
    await here.flush();
    expect(await pending()).toEqual(['c3', 'd4']);
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
