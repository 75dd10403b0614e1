import { readdir } from 'node:fs/promises';
import { BigIntStats, closeSync, constants, fstatSync, openSync, statSync, statfsSync } from 'node:fs';

/**
 * File systems on which adding, removing or renaming an entry stamps the directory with the local
 * kernel's clock: ext2/3/4, XFS, Btrfs, tmpfs (to the nanosecond, or to the second on ext4 with
 * small inodes). Network and user-space file systems (NFS, SMB, FUSE) may stamp a directory with
 * another machine's clock: their directories are always read.
 */
const TRUSTED_FILE_SYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994]);

/**
 * How old a directory's times must be when a read begins for the read to be kept: more than a
 * second-granular file system's second plus a tick of the kernel's coarse clock (see DirectoryNames).
 */
const SETTLE_MS = 2000;

interface Entry {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** Frozen: handed out as it is, so what callers derive from it can be kept beside it. */
  names: readonly string[];
}

/**
 * The names of the entries of local directories (a table's `_versions/` of thousands of manifests,
 * read before each page of its history), kept from one read to the next while the directory's own
 * attributes say no entry changed: one `stat` instead of a directory read and thousands of names.
 *
 * A directory's modification and change times move when an entry changes, to the kernel's coarse
 * clock (and, on some file systems, to the second): two changes within one tick leave the same
 * times. A read taken between them would be kept though the second change is not in it. So a read
 * is kept only when both times were already more than SETTLE_MS old as the read began: any later
 * change then stamps a newer time. The times and the names come from the same open directory,
 * never from a path that could have been pointed elsewhere between the two (a symbolic link
 * retargeted, a parent renamed). Kept reads are checked against the device, inode, modification
 * and change times (a directory removed and made again, or stamped back with utimes, has a new
 * change time).
 */
export class DirectoryNames {
  private readonly entries = new Map<string, Entry>();
  private keptNames = 0;
  /** Directory reads made (not answered from what was kept): what the cache saves is seen here. */
  reads = 0;
  private readonly directories: number;
  private readonly names: number;
  private readonly now: () => number;

  constructor(
    options: {
      /** At most so many directories kept, the least recently used let go first. */
      directories?: number;
      /** At most so many names kept in all (a directory of more is never kept). */
      names?: number;
      /** The wall clock the directories' times are compared with. */
      now?: () => number;
    } = {},
  ) {
    this.directories = options.directories ?? 256;
    this.names = options.names ?? 200_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The names of the directory's entries but its subdirectories (an entry of unknown type counts);
   * rejects when it cannot be read. While the directory is unchanged, the same array each time.
   */
  async read(directory: string): Promise<readonly string[]> {
    const kept = this.entries.get(directory);
    if (kept) {
      const stats = statSync(directory, { bigint: true, throwIfNoEntry: false });
      if (stats && same(kept, stats)) {
        // Most recently used last: the first entry is the one to evict.
        this.entries.delete(directory);
        this.entries.set(directory, kept);
        return kept.names;
      }
      this.forget(directory, kept);
    }
    this.reads++;
    const startedAt = this.now();
    let fd: number;
    try {
      fd = openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch {
      // Missing, not a directory, or not to be opened: the read says which, as it always did.
      return namesIn(directory);
    }
    try {
      const stats = fstatSync(fd, { bigint: true });
      // The open directory itself, whatever its path names by now.
      const names = await namesIn(`/proc/self/fd/${fd}`).catch(() => undefined);
      if (!names) return namesIn(directory);
      const settled = startedAt - Math.max(Number(stats.mtimeMs), Number(stats.ctimeMs)) > SETTLE_MS;
      if (settled && names.length <= this.names && trustedFileSystem(fd)) {
        Object.freeze(names);
        // Another read of the same directory may have been kept while this one waited.
        const earlier = this.entries.get(directory);
        if (earlier) this.forget(directory, earlier);
        this.entries.set(directory, { dev: stats.dev, ino: stats.ino, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, names });
        this.keptNames += names.length;
        for (const [oldest, entry] of this.entries) {
          if (this.entries.size <= this.directories && this.keptNames <= this.names) break;
          this.forget(oldest, entry);
        }
      }
      return names;
    } finally {
      closeSync(fd);
    }
  }

  private forget(directory: string, entry: Entry): void {
    this.entries.delete(directory);
    this.keptNames -= entry.names.length;
  }
}

async function namesIn(directory: string): Promise<string[]> {
  return (await readdir(directory, { withFileTypes: true })).filter((entry) => !entry.isDirectory()).map((entry) => entry.name);
}

function same(entry: Entry, stats: BigIntStats): boolean {
  return entry.ino === stats.ino && entry.dev === stats.dev && entry.mtimeNs === stats.mtimeNs && entry.ctimeNs === stats.ctimeNs;
}

function trustedFileSystem(fd: number): boolean {
  try {
    return TRUSTED_FILE_SYSTEMS.has(statfsSync(`/proc/self/fd/${fd}`).type);
  } catch {
    return false;
  }
}
