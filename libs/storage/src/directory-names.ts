import { readdir } from 'node:fs/promises';
import { BigIntStats, statSync, statfsSync } from 'node:fs';

/**
 * File systems whose directories take a new modification time, from the kernel's own clock to the
 * nanosecond (ticks of a few ms), whenever an entry is added, removed or renamed: ext2/3/4, XFS,
 * Btrfs, tmpfs. Network and user-space file systems (NFS, SMB, FUSE) may stamp a directory with
 * another machine's clock or to the second: their directories are always read.
 */
const TRUSTED_FILE_SYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994]);

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
 * A directory's modification time moves when an entry changes, to the kernel's coarse clock: two
 * changes within one tick leave the same time. A read taken in that tick, between them, would be
 * kept though the second change is not in it. So a read is kept only when the directory's time was
 * already more than `settleMs` old as the read began: any later change then stamps a newer time.
 * Kept reads are checked against the device, inode, modification and change times (a directory
 * removed and made again, or stamped back with utimes, has a new change time).
 */
export class DirectoryNames {
  private readonly entries = new Map<string, Entry>();
  /** Directory reads made (not answered from what was kept): what the cache saves is seen here. */
  reads = 0;

  constructor(
    private readonly capacity = 256,
    private readonly settleMs = 1000,
  ) {}

  /**
   * The names of the directory's entries but its subdirectories (an entry of unknown type counts);
   * rejects when it cannot be read. While the directory is unchanged, the same array each time.
   */
  async read(directory: string): Promise<readonly string[]> {
    const startedAt = Date.now();
    const stats = statSync(directory, { bigint: true, throwIfNoEntry: false });
    const kept = this.entries.get(directory);
    if (kept && stats && same(kept, stats)) {
      // Most recently used last: the first entry is the one to evict.
      this.entries.delete(directory);
      this.entries.set(directory, kept);
      return kept.names;
    }
    this.entries.delete(directory);
    this.reads++;
    const names = (await readdir(directory, { withFileTypes: true })).filter((entry) => !entry.isDirectory()).map((entry) => entry.name);
    if (stats?.isDirectory() && startedAt - Number(stats.mtimeMs) > this.settleMs && trustedFileSystem(directory)) {
      Object.freeze(names);
      this.entries.set(directory, { dev: stats.dev, ino: stats.ino, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, names });
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return names;
  }
}

function same(entry: Entry, stats: BigIntStats): boolean {
  return entry.ino === stats.ino && entry.dev === stats.dev && entry.mtimeNs === stats.mtimeNs && entry.ctimeNs === stats.ctimeNs;
}

function trustedFileSystem(directory: string): boolean {
  try {
    return TRUSTED_FILE_SYSTEMS.has(statfsSync(directory).type);
  } catch {
    return false;
  }
}
