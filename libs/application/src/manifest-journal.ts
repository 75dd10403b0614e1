import { storePathOf } from '@app/catalog';
import { FileJournal } from '@app/event-store';
import { DirectorySyncs, restoreFile, syncFiles } from '@app/lance';

const BATCH = 1000;

export interface ManifestJournalOptions {
  /** How often pending manifests are looked at. */
  flushMs: number;
  /**
   * How long a manifest stays journaled before it is synced and released. The kernel writes a
   * file back on its own within its dirty expiry (Linux: 30 s, looked at every 5 s), and the sync
   * of a file already written back costs a system call, not a disk write: syncing sooner makes the
   * server pay for the write the kernel would have made anyway. 0 syncs at the next flush.
   */
  syncAgeMs: number;
  /** Past this many bytes of pending manifests the oldest are synced whatever their age, so the journal stays bounded. */
  maxPendingBytes: number;
  onError: (error: unknown) => void;
}

/**
 * The other half of journaled manifests: the event store holds each finalised manifest's bytes,
 * written in the same durable write as its version's event, until this makes the file itself
 * durable (data, then directory entry) and releases it. At start-up, before anything is served,
 * whatever a crash left pending is put back on disk from the journal.
 */
export class ManifestJournal {
  private readonly dirs = new DirectorySyncs();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** The newest journal id seen at each look, oldest look first: what was pending by a given time. */
  private readonly looks: Array<{ at: number; newest: number }> = [];
  /**
   * The pending files' sizes as counted so far, oldest first. Each flush reads only
   * the rows recorded since the last (`pendingPaths` after the newest counted): summing every
   * pending row each second read as many pages of the store as the journal held rows (40 s of
   * commits), and pushed the pages commits use out of SQLite's cache.
   */
  private counted: Array<{ id: number; size: number }> = [];

  constructor(
    private readonly journal: FileJournal,
    private readonly options: ManifestJournalOptions,
  ) {}

  /** Restores every pending file as the journal recorded it; returns what it found. */
  async recover(): Promise<{ intact: number; restored: number; gone: number }> {
    const counts = { intact: 0, restored: 0, gone: 0 };
    for (;;) {
      const pending = await this.journal.pending(BATCH);
      for (const file of pending) counts[await restoreFile(file.path, file.bytes)]++;
      await this.journal.release(pending.map((f) => f.id));
      if (pending.length < BATCH) return counts;
    }
  }

  /**
   * Releases the journal's rows of manifests about to be removed on purpose (versions recorded
   * deleted): put back by a recovery, they would be manifests of versions the catalog no longer has.
   * Rows counted here stay counted until a flush passes them: the bound is kept early, never late.
   */
  async forget(manifestPaths: readonly string[]): Promise<void> {
    await this.journal.releasePaths(manifestPaths.map((p) => `/${storePathOf(p)}`));
  }

  start(): void {
    this.timer = setInterval(() => void this.flush().catch(this.options.onError), this.options.flushMs);
    this.timer.unref();
  }

  /**
   * Syncs and releases, oldest first, what has been pending for the sync age and whatever more
   * brings the journal under its bound (everything, when `all`); one flush at a time.
   */
  flush(all = false): Promise<void> {
    const run = this.flushing.then(async () => {
      if (all) {
        await syncJournaled(this.journal, this.dirs);
        this.uncount(Infinity);
        return;
      }
      const upTo = await this.aged();
      let excess = (await this.pendingBytes()) - this.options.maxPendingBytes;
      const oldest = this.counted[0]?.id;
      if (oldest === undefined || (oldest > upTo && excess <= 0)) return;
      let first = true;
      let released = 0;
      await syncJournaled(this.journal, this.dirs, (file) => {
        // The oldest row left: any counted before it was released elsewhere (another process on the same store).
        if (first) excess -= this.uncount(file.id - 1);
        first = false;
        if (file.id > upTo && excess <= 0) return false;
        excess -= file.size;
        released = file.id;
        return true;
      });
      // Nothing left at all (`first`): everything counted was released elsewhere.
      this.uncount(first ? Infinity : released);
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /** What the pending files hold together: those counted before, and those recorded since. */
  private async pendingBytes(): Promise<number> {
    for (;;) {
      const after = this.counted.length ? this.counted[this.counted.length - 1].id : 0;
      const recorded = await this.journal.pendingPaths(BATCH, after);
      for (const { id, size } of recorded) this.counted.push({ id, size });
      if (recorded.length < BATCH) return sizeOf(this.counted);
    }
  }

  /** Stops counting the files up to `id`, released; returns how many bytes they held. */
  private uncount(id: number): number {
    let n = 0;
    while (n < this.counted.length && this.counted[n].id <= id) n++;
    const gone = this.counted.slice(0, n);
    this.counted = this.counted.slice(n);
    return sizeOf(gone);
  }

  /** The highest journal id recorded at least the sync age ago, as the looks since then tell. */
  private async aged(): Promise<number> {
    const now = Date.now();
    this.looks.push({ at: now, newest: await this.journal.newestId() });
    const horizon = now - this.options.syncAgeMs;
    while (this.looks.length > 1 && this.looks[1].at <= horizon) this.looks.shift();
    return this.looks[0].at <= horizon ? this.looks[0].newest : 0;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush(true);
  }
}

function sizeOf(files: ReadonlyArray<{ size: number }>): number {
  return files.reduce((n, f) => n + f.size, 0);
}

/**
 * Syncs the pending files on disk and releases them, oldest first, up to the first one `due`
 * refuses (every one, without it): what a journal's flush does, and what moving the log off the
 * store that journals them must do first.
 */
export async function syncJournaled(
  journal: FileJournal,
  dirs = new DirectorySyncs(),
  due: (file: { id: number; size: number }) => boolean = () => true,
): Promise<void> {
  for (;;) {
    // Paths only: the files are on disk, and reading their bytes back cost every commit a copy.
    const batch = await journal.pendingPaths(BATCH);
    const taken = batch.findIndex((file) => !due(file));
    const synced = taken < 0 ? batch : batch.slice(0, taken);
    if (synced.length === 0) return;
    await syncFiles(synced.map((f) => f.path), dirs);
    await journal.release(synced.map((f) => f.id));
    if (synced.length < BATCH) return;
  }
}
