import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, WrongExpectedRevisionError } from '@app/event-store';

/** The embedded store's file journal: files recorded in the same durable write as events. */
describe('embedded store file journal', () => {
  const open = () => new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'journal-')), 'events.sqlite3'));
  const bytes = (s: string) => Buffer.from(s);

  it('keeps the files appended with events until they are released, oldest first', async () => {
    const store = open();
    await store.append('s', [{ type: 'A', data: {} }], 'no_stream', { files: [{ path: '/w/a', bytes: bytes('one') }] });
    await store.append('s', [{ type: 'B', data: {} }], 0, { files: [{ path: '/w/b', bytes: bytes('two') }, { path: '/w/c', bytes: bytes('three') }] });
    const pending = await store.journal.pending(10);
    expect(pending.map((f) => [f.path, Buffer.from(f.bytes).toString()])).toEqual([
      ['/w/a', 'one'],
      ['/w/b', 'two'],
      ['/w/c', 'three'],
    ]);
    expect((await store.journal.pending(2)).map((f) => f.path)).toEqual(['/w/a', '/w/b']);
    // The same files by path alone, for syncing what is already on disk.
    expect(await store.journal.pendingPaths(10)).toEqual(pending.map(({ id, path, bytes }) => ({ id, path, size: bytes.length })));
    expect((await store.journal.pendingPaths(1)).map((f) => f.path)).toEqual(['/w/a']);
    // Those recorded after a given one only.
    expect((await store.journal.pendingPaths(10, pending[0].id)).map((f) => f.path)).toEqual(['/w/b', '/w/c']);
    expect(await store.journal.pendingPaths(10, pending[2].id)).toEqual([]);
    await store.journal.release([pending[0].id, pending[2].id]);
    expect((await store.journal.pending(10)).map((f) => f.path)).toEqual(['/w/b']);
    expect(await store.journal.pendingPaths(10)).toEqual([{ id: pending[1].id, path: '/w/b', size: 3 }]);
    await store.close();
  });

  it('releases the files at given paths, every row of each, whatever their ids, and no other', async () => {
    const store = open();
    await store.append('s', [{ type: 'A', data: {} }], 'no_stream', { files: [{ path: '/w/a', bytes: bytes('one') }, { path: '/w/b', bytes: bytes('two') }] });
    // The same manifest journaled twice (a commit retried with identical bytes), and a path that names a prefix of another.
    await store.append('s', [{ type: 'B', data: {} }], 0, { files: [{ path: '/w/a', bytes: bytes('one') }, { path: '/w/a2', bytes: bytes('x') }, { path: "/w/it's", bytes: bytes('q') }] });
    await store.journal.releasePaths(['/w/a', "/w/it's", '/w/none']);
    expect((await store.journal.pendingPaths(10)).map((f) => f.path)).toEqual(['/w/b', '/w/a2']);
    await store.journal.releasePaths([]);
    expect((await store.journal.pendingPaths(10)).map((f) => f.path)).toEqual(['/w/b', '/w/a2']);
    await store.close();
  });

  it('records no file when the append is refused, so files and events are one write', async () => {
    const store = open();
    await store.append('s', [{ type: 'A', data: {} }], 'no_stream');
    await expect(store.append('s', [{ type: 'B', data: {} }], 5, { files: [{ path: '/w/x', bytes: bytes('x') }] })).rejects.toBeInstanceOf(
      WrongExpectedRevisionError,
    );
    expect(await store.journal.pending(10)).toEqual([]);
    expect(await store.readStream('s')).toHaveLength(1);
    await store.close();
  });

  it('survives closing and reopening the store file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'journal-'));
    const first = new SqliteEventStore(join(dir, 'events.sqlite3'));
    await first.append('s', [{ type: 'A', data: {} }], 'no_stream', { files: [{ path: '/w/kept', bytes: bytes('kept') }] });
    await first.close();
    const second = new SqliteEventStore(join(dir, 'events.sqlite3'));
    expect((await second.journal.pending(10)).map((f) => [f.path, Buffer.from(f.bytes).toString()])).toEqual([['/w/kept', 'kept']]);
    await second.close();
  });
});
