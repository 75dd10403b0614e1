import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CatalogState, StateImage } from '@app/catalog';
import { EventStore } from '@app/event-store';
import { SnapshotWriteStats, readSnapshotFile, writeSnapshotFile } from './snapshot-file';

export interface SnapshotSettings {
  dir: string;
  /** A snapshot is written once this many events were folded since the last one (and at shutdown). */
  every: number;
  log?: (message: string) => void;
}

/**
 * Snapshots of folded states, one file per database. Only a cache: the log stays the truth, so a
 * snapshot that cannot be proven to be a prefix of the log as it is now is ignored.
 */
export class Snapshots {
  constructor(readonly settings: SnapshotSettings) {}

  get every(): number {
    return this.settings.every;
  }

  fileOf(database: string): string {
    // Database names are checked by the API, but a file name must not depend on that.
    const safe = /^[A-Za-z0-9_-]{1,100}$/.test(database) ? database : `x-${Buffer.from(database).toString('hex').slice(0, 200)}`;
    return join(this.settings.dir, `${safe}.snapshot`);
  }

  /** The state a usable snapshot holds, or undefined (and why, in the log). */
  async load(database: string, store: EventStore, streamId: string): Promise<CatalogState | undefined> {
    const read = await readSnapshotFile(this.fileOf(database), database);
    if ('unusable' in read) {
      if (read.unusable !== 'no snapshot') this.log(`ignoring the snapshot of '${database}': ${read.unusable}; folding the log from the start`);
      return undefined;
    }
    const { header, image } = read;
    const [event] = await store.readStream(streamId, { fromRevision: header.revision, maxCount: 1 });
    if (!event || event.revision !== header.revision) {
      this.log(`ignoring the snapshot of '${database}': it covers revision ${header.revision}, beyond the stream's head`);
      return undefined;
    }
    if (event.id !== header.eventId) {
      this.log(`ignoring the snapshot of '${database}': the log holds another event at revision ${header.revision} (log replaced)`);
      return undefined;
    }
    try {
      const state = CatalogState.fromImage(image);
      this.log(`restored '${database}' from its snapshot at revision ${header.revision}`);
      return state;
    } catch (e) {
      this.log(`ignoring the snapshot of '${database}': ${(e as Error).message}`);
      return undefined;
    }
  }

  async save(database: string, image: StateImage, eventId: string): Promise<SnapshotWriteStats> {
    await mkdir(this.settings.dir, { recursive: true });
    return writeSnapshotFile(this.fileOf(database), { database, eventId }, image);
  }

  log(message: string): void {
    this.settings.log?.(message);
  }
}
