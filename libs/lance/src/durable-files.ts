import { closeSync, constants, fdatasync, fsync, openSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * fsync of directories, shared: a caller that arrives while a sync of the same directory runs
 * waits for it and joins the single sync that follows (which began after its own write), so
 * concurrent commits to one table cost two directory syncs at most instead of one each.
 */
export class DirectorySyncs {
  private readonly running = new Map<string, Promise<void>>();
  private readonly following = new Map<string, Promise<void>>();

  sync(dir: string): Promise<void> {
    const following = this.following.get(dir);
    if (following) return following;
    const running = this.running.get(dir);
    if (!running) return this.start(dir);
    const next = running
      .catch(() => undefined)
      .then(() => {
        this.following.delete(dir);
        return this.start(dir);
      });
    this.following.set(dir, next);
    return next;
  }

  private start(dir: string): Promise<void> {
    const run = syncPath(dir, false).finally(() => {
      if (this.running.get(dir) === run) this.running.delete(dir);
    });
    this.running.set(dir, run);
    return run;
  }
}

/**
 * Only the sync waits for the disk, so only it goes through libuv's pool: opening and closing a
 * file whose name is in the page cache take microseconds, and each awaited FileHandle call was a
 * hop to the pool and back (on two cores, a context switch each way), about 30 µs a commit.
 */
export async function syncPath(path: string, dataOnly: boolean): Promise<void> {
  const fd = openSync(path, constants.O_RDONLY);
  try {
    await new Promise<void>((done, fail) => (dataOnly ? fdatasync : fsync)(fd, (e) => (e ? fail(e) : done())));
  } finally {
    closeSync(fd);
  }
}

/**
 * Files synced at once. Their opens and closes run on the main thread (see `syncPath`), so a flush of
 * a thousand files goes in slices, letting requests in between, rather than blocking for all of them.
 */
const SYNC_SLICE = 64;

/** Makes files written without a sync durable: their data, then their directories' entries. */
export async function syncFiles(paths: readonly string[], dirs: DirectorySyncs): Promise<void> {
  const present: string[] = [];
  for (let from = 0; from < paths.length; from += SYNC_SLICE) {
    const slice = paths.slice(from, from + SYNC_SLICE);
    // Settled, not raced: a failure is reported once no sync of the slice is still running.
    const outcomes = await Promise.allSettled(slice.map((p) => syncPath(p, true)));
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') present.push(slice[i]);
      // A table directory removed since (a purged table) has nothing left to keep.
      else if ((outcome.reason as NodeJS.ErrnoException).code !== 'ENOENT') throw outcome.reason;
    }
  }
  await Promise.all([...new Set(present.map((p) => dirname(p)))].map((d) => dirs.sync(d)));
}

/**
 * Puts a journaled file back as it was recorded, when a crash lost or damaged it: written beside
 * it, synced and renamed into place, so a reader never sees it half-written. An intact file is
 * left as it is (and synced). A missing directory means the table's files are gone on purpose.
 */
export async function restoreFile(path: string, bytes: Uint8Array): Promise<'intact' | 'restored' | 'gone'> {
  const current = await readFile(path).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (current && Buffer.compare(current, bytes) === 0) {
    await syncPath(path, true);
    return 'intact';
  }
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.restore`);
  try {
    await writeFile(temp, bytes, { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw e;
  }
  try {
    await syncPath(temp, true);
    await rename(temp, path);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  await syncPath(dirname(path), false);
  return 'restored';
}
