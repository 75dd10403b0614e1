import { FileJournal } from '@app/event-store';
import { DirectorySyncs, restoreFile, syncFiles } from '@app/lance';

const BATCH = 1000;

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

  constructor(
    private readonly journal: FileJournal,
    private readonly options: { flushMs: number; onError: (error: unknown) => void },
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

  /** Syncs and releases what is pending now; one flush at a time. */
  flush(): Promise<void> {
    const run = this.flushing.then(async () => {
      for (;;) {
        // Paths only: the files are on disk, and reading their bytes back cost every commit a copy.
        const pending = await this.journal.pendingPaths(BATCH);
        if (pending.length === 0) return;
        await syncFiles(pending.map((f) => f.path), this.dirs);
        await this.journal.release(pending.map((f) => f.id));
        if (pending.length < BATCH) return;
      }
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
