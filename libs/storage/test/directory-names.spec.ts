import { linkSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectoryNames } from '../src';

describe('the names of a directory, kept while it is unchanged', () => {
  const root = mkdtempSync(join(tmpdir(), 'directory-names-'));
  let n = 0;
  /** A directory holding the given files (and a subdirectory). */
  const directoryWith = (files: string[]) => {
    const dir = join(root, `d${n++}`);
    mkdirSync(join(dir, 'sub'), { recursive: true });
    for (const file of files) writeFileSync(join(dir, file), file);
    return dir;
  };
  /** Names kept by a clock an hour ahead: every directory made here looks settled to it. */
  const settledNames = (bounds: { directories?: number; names?: number } = {}) => new DirectoryNames({ ...bounds, now: () => Date.now() + 3_600_000 });
  const sorted = async (names: DirectoryNames, dir: string) => [...(await names.read(dir))].sort();

  it('reads a settled directory once, then answers from what it read until an entry is added, removed or renamed', async () => {
    const names = settledNames();
    const dir = directoryWith(['a', 'b']);
    const first = await names.read(dir);
    expect([...first].sort()).toEqual(['a', 'b']);
    // The very array read: what a caller derived from it still holds.
    expect(await names.read(dir)).toBe(first);
    expect(names.reads).toBe(1);
    // Each change is seen by the very next call, however soon it comes.
    writeFileSync(join(dir, 'c'), 'c');
    expect(await sorted(names, dir)).toEqual(['a', 'b', 'c']);
    unlinkSync(join(dir, 'a'));
    expect(await sorted(names, dir)).toEqual(['b', 'c']);
    renameSync(join(dir, 'b'), join(dir, 'd'));
    expect(await sorted(names, dir)).toEqual(['c', 'd']);
    linkSync(join(dir, 'c'), join(dir, 'e'));
    expect(await sorted(names, dir)).toEqual(['c', 'd', 'e']);
    expect(names.reads).toBe(5);
  });

  it('keeps nothing of a directory changed within the last two seconds: a change in the same tick would not move its times', async () => {
    const names = new DirectoryNames();
    const dir = directoryWith(['a']);
    expect(await names.read(dir)).toEqual(['a']);
    unlinkSync(join(dir, 'a'));
    writeFileSync(join(dir, 'b'), 'b');
    expect(await names.read(dir)).toEqual(['b']);
    expect(await names.read(dir)).toEqual(['b']);
    expect(names.reads).toBe(3);
    // Stamped back an hour, its change time still says it was just changed.
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(dir, anHourAgo, anHourAgo);
    await names.read(dir);
    await names.read(dir);
    expect(names.reads).toBe(5);
  });

  it('reads again a directory made anew, or stamped back to the time it had', async () => {
    const names = settledNames();
    const dir = directoryWith(['a']);
    expect(await names.read(dir)).toEqual(['a']);
    const { mtime } = statSync(dir);
    unlinkSync(join(dir, 'a'));
    writeFileSync(join(dir, 'b'), 'b');
    utimesSync(dir, mtime, mtime);
    expect(await names.read(dir)).toEqual(['b']);
    rmSync(dir, { recursive: true });
    mkdirSync(dir);
    writeFileSync(join(dir, 'c'), 'c');
    expect(await names.read(dir)).toEqual(['c']);
    expect(names.reads).toBe(3);
  });

  it('reads again a link to a directory pointed at another, and back', async () => {
    const names = settledNames();
    const [a, b] = [directoryWith(['in-a']), directoryWith(['in-b'])];
    const link = join(root, `link${n++}`);
    symlinkSync(a, link);
    expect(await names.read(link)).toEqual(['in-a']);
    unlinkSync(link);
    symlinkSync(b, link);
    expect(await names.read(link)).toEqual(['in-b']);
    unlinkSync(link);
    symlinkSync(a, link);
    expect(await names.read(link)).toEqual(['in-a']);
    expect(names.reads).toBe(3);
    expect(await names.read(link)).toEqual(['in-a']);
    expect(names.reads).toBe(3);
  });

  it('keeps the directories used last, up to its capacity', async () => {
    const names = settledNames({ directories: 2 });
    const [x, y, z] = [directoryWith(['x']), directoryWith(['y']), directoryWith(['z'])];
    for (const dir of [x, y, x, z]) await names.read(dir);
    expect(names.reads).toBe(3);
    await names.read(x);
    expect(names.reads).toBe(3);
    await names.read(y);
    expect(names.reads).toBe(4);
  });

  it('keeps no more names in all than it may, and never a directory of more', async () => {
    const names = settledNames({ names: 3 });
    const [two, other, four] = [directoryWith(['a', 'b']), directoryWith(['c']), directoryWith(['d', 'e', 'f', 'g'])];
    for (const dir of [two, other, two, other]) await names.read(dir);
    expect(names.reads).toBe(2);
    await names.read(four);
    await names.read(four);
    expect(names.reads).toBe(4);
    // Three names kept: a third directory of two lets the least recently used go.
    const third = directoryWith(['h', 'i']);
    await names.read(third);
    await names.read(other);
    await names.read(third);
    expect(names.reads).toBe(5);
    await names.read(two);
    expect(names.reads).toBe(6);
  });

  it('rejects a directory that is not there, or a file, and keeps nothing of either', async () => {
    const names = settledNames();
    const dir = directoryWith(['a']);
    expect(await names.read(dir)).toEqual(['a']);
    await expect(names.read(join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(names.read(join(dir, 'a'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    rmSync(dir, { recursive: true });
    await expect(names.read(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
