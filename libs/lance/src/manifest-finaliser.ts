import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CatalogError, ErrorCode, VersionRecord, invalidInput, isStagingManifestOf } from '@app/catalog';
import { DirectorySyncs, syncPath } from './durable-files';
import { refuseForeignReferences } from './manifest-references';
import type { CheckedManifest } from './stored-manifests';
import { Warehouse } from '@app/storage';

export interface FinalisedManifest {
  /** The final manifest's location (an absolute path, or an object URI). */
  path: string;
  /** The location of the staging manifest it was copied from. */
  staging: string;
  size: number;
  /** The manifest's bytes, where the finaliser read them (a local warehouse, for the journal). */
  bytes?: Buffer;
  /** The final object's entity tag on an object store. */
  eTag?: string;
  /** False when an identical final manifest was already there (a retried commit). */
  created: boolean;
  /**
   * Set where the copy to the final name waits for the version's record (an object store, which
   * offers no put-if-absent copy): `publish` makes it once the version is recorded.
   */
  deferred?: { tableLocation: string };
  /** The whole staging manifest as checked, when one read held it: `publish` writes these bytes rather than copying. */
  checkedBytes?: Buffer;
}

/**
 * Managed versioning's copy of a client's staging manifest to its final `_versions/` name, done
 * before the version is recorded so that a version record always has its manifest.
 */
export interface ManifestFinaliser {
  /**
   * Put-if-not-exists copy; an identical final manifest (a retry) counts as done. A manifest that
   * references files outside `tableLocation` is refused (400 code 13) before anything is copied.
   */
  finalise(
    stagingStorePath: string,
    finalStorePath: string,
    durability: 'synced' | 'journaled',
    tableLocation: string,
    checked?: StagingCheck,
  ): Promise<FinalisedManifest>;
  /**
   * Where finalising is only reading and checking the staging manifest (an object store): starts
   * that read now, before the commit is decided, so that it is not made while other commits of the
   * database wait for it; `finalise` takes what it found. Never rejects on its own (a refusal or
   * an unreachable store is what `finalise` then throws), and reads nothing that is not in the
   * warehouse.
   */
  checkStaging?(stagingStorePath: string, tableLocation: string): StagingCheck;
  /** Runs once the version is recorded: the staging manifest is no longer needed. */
  release(manifest: FinalisedManifest): void;
  /**
   * Runs once a deferred manifest's version is recorded, before the commit is answered: makes the
   * copy to the final name, waiting out a store that is down for a while. Never rejects: a copy it
   * could not make is left to `repair`.
   */
  publish?(manifest: FinalisedManifest): Promise<void>;
  /**
   * The final manifest of a recorded version whose copy was deferred, made from its recorded staging
   * manifest when the process that recorded it ended before its copy. Answers whether the final
   * manifest is there; throws when the store cannot say.
   */
  repair?(record: VersionRecord, tableLocation: string): Promise<boolean>;
  /**
   * Runs when the version was not recorded by this commit; `recordedByAnother` says whether the
   * catalog holds that version from another commit now (whose final manifest must then stay), and
   * `recorded` the size and entity tag of that commit's manifest where known.
   */
  discard(manifest: FinalisedManifest, recordedByAnother: boolean, recorded?: RecordedManifest): Promise<void>;
}

/** A staging manifest's check started ahead of its commit, for that table location. */
export interface StagingCheck {
  stagingStorePath: string;
  tableLocation: string;
  /** What the read found: its bytes when one read held them, undefined when there is no such object. */
  result: Promise<CheckedManifest | undefined>;
}

/** What the catalog recorded of a version's manifest. */
export interface RecordedManifest {
  size?: number;
  eTag?: string;
}

/**
 * Managed versioning: the client writes a staging manifest, the catalog copies it to its final
 * `_versions/` name before the version is recorded, so a version record always has its manifest.
 * The copy is a hard link where the file system allows one: the same put-if-not-exists, without
 * creating and writing a second file (which cost more than the rest of a commit on ext4 under
 * concurrent commits). Lance never rewrites a staging manifest, so the two names keep one content.
 *
 * How the copy becomes durable is the caller's choice: `synced` fsyncs the file and its directory
 * before returning; `journaled` leaves that to a journal that records the bytes in the same
 * durable write as the version's event (one fsync per group of commits instead of three per
 * commit), and syncs the files afterwards.
 */
export class LocalManifestFinaliser implements ManifestFinaliser {
  private readonly dirs = new DirectorySyncs();
  /** Staging manifests whose versions are recorded, to remove once their commits are answered. */
  private readonly released: string[] = [];

  constructor(private readonly warehouse: Warehouse) {}

  /** Put-if-not-exists copy; an identical final file (a retry) counts as done. */
  async finalise(stagingStorePath: string, finalStorePath: string, durability: 'synced' | 'journaled', tableLocation: string): Promise<FinalisedManifest> {
    const staging = this.local(stagingStorePath);
    const final = this.local(finalStorePath);
    // Synchronous on purpose: the staging manifest was just written, so both calls touch only the
    // page cache (tens of microseconds), where each hop through libuv's thread pool costs more.
    let bytes: Buffer;
    try {
      bytes = readFileSync(staging);
    } catch {
      throw invalidInput(`staging manifest '${stagingStorePath}' does not exist`, 'Write the staging manifest before creating the version.');
    }
    // The whole file was read: the check never needs more of it.
    refuseForeignReferences({ bytes, offset: 0 }, tableLocation, stagingStorePath);
    try {
      copyOnce(staging, final, bytes);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (!bytes.equals(readFileSync(final))) {
        throw new CatalogError(ErrorCode.ConcurrentModification, `another manifest was already committed as '${finalStorePath}'`);
      }
      if (durability === 'synced') await this.sync(final);
      return { path: final, staging, bytes, size: bytes.length, created: false };
    }
    if (durability === 'synced') await this.sync(final);
    return { path: final, staging, bytes, size: bytes.length, created: true };
  }

  /**
   * Removes a staging manifest whose version is recorded (the final name keeps the content). Only a
   * name Lance gives a staging manifest, the final name plus `-<uuid>` beside it, is removed: a
   * client naming some other file as its staging manifest must not get it deleted.
   */
  release({ staging, path: final }: FinalisedManifest): void {
    if (!isStagingManifestOf(staging, final)) return;
    if (this.released.push(staging) === 1) setImmediate(() => this.removeReleased());
  }

  /**
   * Runs once the answers of the commits that released them are written, and before the event loop
   * reads the next requests: removing a name is no part of a commit, so it stays off the path the
   * client waits on. Synchronous, like the link that made the final name: an unlink touches only
   * the directory in the page cache, and a hop through libuv's pool cost each commit more CPU
   * (measured: about 30 µs a commit, in the wake-ups on two cores) than the call itself.
   */
  private removeReleased(): void {
    for (const staging of this.released.splice(0)) {
      try {
        unlinkSync(staging);
      } catch {
        // The commit has succeeded: a staging name already gone, or one that cannot be removed, costs
        // at most some disk space.
      }
    }
  }

  /** Removes the final manifest, if this process created it, when the version it backs was not recorded. */
  async discard({ path: final, created }: FinalisedManifest, recordedByAnother: boolean): Promise<void> {
    if (created && !recordedByAnother) await unlink(final).catch(() => undefined);
  }

  /** The file's content and its name in the directory, both durable before the version is recorded. */
  private async sync(final: string): Promise<void> {
    await Promise.all([syncPath(final, true), this.dirs.sync(dirname(final))]);
  }

  private local(storePath: string): string {
    const path = `/${storePath.replace(/^\/+/, '')}`;
    if (path.includes('\u0000') || path.split('/').includes('..') || !this.warehouse.contains(path)) {
      throw invalidInput(`manifest path '${storePath}' is outside the warehouse`);
    }
    return path;
  }
}

/** Errors for which the file system refuses hard links here; the manifest is then written out. */
const NO_LINKS = new Set(['EXDEV', 'EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS']);

/** Creates `final` with `bytes` (the staging file's content) unless it exists: EEXIST otherwise. */
function copyOnce(staging: string, final: string, bytes: Buffer): void {
  try {
    linkSync(staging, final);
  } catch (e) {
    if (!NO_LINKS.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
    writeFileSync(final, bytes, { flag: 'wx' });
  }
}
