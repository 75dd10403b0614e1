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
      if (all) return syncJournaled(this.journal, this.dirs);
      const upTo = await this.aged();
      let excess = (await this.journal.pendingBytes()) - this.options.maxPendingBytes;
      await syncJournaled(this.journal, this.dirs, (file) => {
        if (file.id > upTo && excess <= 0) return false;
        excess -= file.size;
        return true;
      });
    });
    this.flushing = run.catch(() => undefined);
    return run;
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
