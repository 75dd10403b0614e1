import { CatalogError, ErrorCode, invalidInput } from '@app/catalog';
import { FileInfo, Warehouse } from '@app/storage';
import { FinalisedManifest, ManifestFinaliser, RecordedManifest } from './manifest-finaliser';
import { checkStoredManifest } from './stored-manifests';

/**
 * Managed versioning on an object store, which offers no put-if-absent copy (Swift refuses
 * conditional requests; S3 has none for CopyObject). The event store decides which commit gets a
 * version; the copy to the final name comes before that decision is appended, so a failed copy
 * records nothing. In one process two commits of one version never both copy (the writer decides
 * them one after the other), but two replicas can both find the version free: then
 *
 * - a final manifest already there with other content refuses the commit (409) without copying,
 *   unless it is older than `graceMs`: a copy whose process died before recording it, replaced;
 * - the winner checks, once its version is recorded, after `graceMs` and last after `lastCheckMs`
 *   (a minute at least), that the final object is the one it copied, and copies its staging
 *   manifest again if a loser overwrote it; a check the store cannot answer is tried again; only
 *   after the last is its staging manifest removed;
 * - a loser never removes a final object of a version the catalog holds, and when the final
 *   object is still its own copy it puts the winner's staging manifest (kept for `graceMs`) back,
 *   so the winner's manifest returns even when the winner's process is gone.
 *
 * What is left: a loser killed between its copy and that repair while the winner's process is gone
 * too, or a loser whose copy lands after the winner's last check (docs/architecture.md).
 */
export class ObjectStoreManifestFinaliser implements ManifestFinaliser {
  constructor(
    private readonly warehouse: Warehouse,
    private readonly graceMs = 60_000,
    private readonly onError: (message: string) => void = () => undefined,
    /**
     * When the winner looks at its final object for the last time (and only then removes its staging
     * manifest): a loser stalled between its check and its copy (a paused or starved process) can
     * land its copy well after the grace period, which is short where abandoned copies must free
     * their versions soon.
     */
    private readonly lastCheckMs = Math.max(graceMs, 60_000),
  ) {}

  async finalise(stagingStorePath: string, finalStorePath: string, _durability: 'synced' | 'journaled', tableLocation: string): Promise<FinalisedManifest> {
    const staging = this.uri(stagingStorePath);
    const final = this.uri(finalStorePath);
    const files = this.warehouse.files;
    // The staging manifest's tail is read and checked in the time a head of it took.
    const [stagingInfo, finalInfo] = await Promise.all([checkStoredManifest(files, staging, tableLocation, stagingStorePath), files.head(final)]);
    if (!stagingInfo) {
      throw invalidInput(`staging manifest '${stagingStorePath}' does not exist`, 'Write the staging manifest before creating the version.');
    }
    if (finalInfo) {
      if (await this.sameContent(staging, stagingInfo, final, finalInfo)) {
        return { path: final, staging, size: finalInfo.size, eTag: finalInfo.eTag, created: false };
      }
      if (!this.abandoned(finalInfo)) {
        // No commit holds the version yet (the writer decided it free): this is a racing commit's
        // copy about to be recorded, or one whose replica died before recording it. Not a conflict
        // yet: a retry gets 409 once the racing commit is recorded, or replaces an abandoned copy.
        throw new CatalogError(
          ErrorCode.ServiceUnavailable,
          `the final manifest '${finalStorePath}' holds another commit's copy that is not recorded yet; retry later`,
        );
      }
      this.onError(`replacing ${final}: a copy made ${Math.round((Date.now() - finalInfo.modifiedMillis) / 1000)} s ago whose commit was never recorded`);
    }
    const copied = await files.copy(staging, final);
    const manifest = { path: final, staging, size: copied.size, eTag: copied.eTag, created: true };
    if (copied.eTag === undefined || copied.eTag !== stagingInfo.eTag) await this.checkCopy(manifest, tableLocation, stagingStorePath);
    return manifest;
  }

  /**
   * The copy's entity tag is not the checked one: the staging object was replaced after its check,
   * or it was a multipart upload, whose tag a store's copy need not keep. The copy itself is checked
   * then, and removed if refused, since no version records it.
   */
  private async checkCopy(manifest: FinalisedManifest, tableLocation: string, name: string): Promise<void> {
    try {
      await checkStoredManifest(this.warehouse.files, manifest.path, tableLocation, name);
    } catch (e) {
      await this.discard(manifest, false);
      throw e;
    }
  }

  release(manifest: FinalisedManifest): void {
    void this.keepOwn(manifest).catch((e) => this.onError(`checking ${manifest.path}: ${String(e)}`));
    const checks = [...new Set([this.graceMs, Math.max(this.graceMs, this.lastCheckMs)])];
    for (const [i, delay] of checks.entries()) {
      const last = i === checks.length - 1;
      const later = setTimeout(() => {
        void this.keepOwnThroughOutages(manifest)
          .then(() => (last ? this.removeStaging(manifest) : undefined))
          .catch((e) => this.onError(`checking ${manifest.path}: ${String(e)}`));
      }, delay);
      later.unref();
    }
  }

  /** A check the store could not answer (down for a moment) is tried again, for up to a minute. */
  private async keepOwnThroughOutages(manifest: FinalisedManifest): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.keepOwn(manifest);
      } catch (e) {
        if (attempt >= 60) throw e;
        await new Promise((r) => setTimeout(r, 1000).unref());
      }
    }
  }

  async discard(manifest: FinalisedManifest, recordedByAnother: boolean, recorded?: RecordedManifest): Promise<void> {
    if (!manifest.created) return;
    if (recordedByAnother) return this.restoreWinner(manifest, recorded).catch((e) => this.onError(`restoring ${manifest.path}: ${String(e)}`));
    const info = await this.warehouse.files.head(manifest.path).catch(() => undefined);
    if (info && info.eTag === manifest.eTag) await this.warehouse.files.remove(manifest.path).catch(() => undefined);
  }

  /**
   * A final manifest of a version the catalog found free (the caller decided this commit against the
   * caught-up state) is another commit's copy on its way to being recorded, or one whose process died
   * between its copy and its append. The first is recorded within moments; one older than the grace
   * period is taken for the second, else that version could never be committed again. Replacing it is
   * the race of two copies above, settled by the append; Last-Modified has whole seconds, hence one more.
   */
  private abandoned(finalInfo: FileInfo): boolean {
    return Date.now() - finalInfo.modifiedMillis > this.graceMs + 1000;
  }

  /** Puts this commit's manifest back under its final name if another copy replaced it. */
  private async keepOwn(manifest: FinalisedManifest): Promise<void> {
    const info = await this.warehouse.files.head(manifest.path);
    if (info && info.eTag === manifest.eTag) return;
    const again = await this.warehouse.files.copy(manifest.staging, manifest.path);
    this.onError(`the final manifest ${manifest.path} had been replaced by a racing commit; copied this commit's manifest back`);
    manifest.eTag = again.eTag;
  }

  /**
   * This losing commit's copy may have replaced the recorded commit's final manifest. Where the final
   * object is still this copy, the winner's staging manifest (the one other staging name of this
   * version, of the recorded entity tag, else of the recorded size) is copied back over it. Losers'
   * staging manifests are often of the winner's size (a client's manifests of one version differ
   * little), so the size alone may name several.
   */
  private async restoreWinner(manifest: FinalisedManifest, recorded?: RecordedManifest): Promise<void> {
    const files = this.warehouse.files;
    const info = await files.head(manifest.path).catch(() => undefined);
    if (!info || info.eTag !== manifest.eTag) return;
    const slash = manifest.path.lastIndexOf('/');
    const [directory, finalName] = [manifest.path.slice(0, slash), manifest.path.slice(slash + 1)];
    const own = manifest.staging.slice(slash + 1);
    const winners = (await files.list(directory)).filter(
      (f) =>
        f.name.startsWith(`${finalName}-`) &&
        f.name !== own &&
        (recorded?.size === undefined || Number.isNaN(recorded.size) || f.size === recorded.size) &&
        (recorded?.eTag === undefined || f.eTag === undefined || unquoted(f.eTag) === unquoted(recorded.eTag)),
    );
    if (winners.length !== 1) {
      this.onError(`a racing commit replaced the final manifest ${manifest.path} and ${winners.length} candidate staging manifests of the recorded one were found; the recorded commit's own check restores it`);
      return;
    }
    await files.copy(`${directory}/${winners[0].name}`, manifest.path);
    this.onError(`this commit lost the race for ${manifest.path} after copying; the recorded commit's manifest was copied back`);
  }

  /** Only a name of Lance's staging form (the final name plus `-<uuid>`) is removed. */
  private async removeStaging({ staging, path: final }: FinalisedManifest): Promise<void> {
    if (!staging.startsWith(`${final}-`) || staging.slice(final.length + 1).includes('/')) return;
    await this.warehouse.files.remove(staging);
  }

  private async sameContent(staging: string, stagingInfo: FileInfo, final: string, finalInfo: FileInfo): Promise<boolean> {
    if (stagingInfo.size !== finalInfo.size) return false;
    if (stagingInfo.eTag && stagingInfo.eTag === finalInfo.eTag) return true;
    // A multipart upload's entity tag is not its content's digest: compare the bytes.
    const [a, b] = await Promise.all([this.warehouse.files.read(staging), this.warehouse.files.read(final)]);
    return a !== undefined && b !== undefined && a.equals(b);
  }

  private uri(storePath: string): string {
    const bucket = /^s3:\/\/([^/]+)/.exec(this.warehouse.root)![1];
    const key = storePath.replace(/^\/+/, '');
    const uri = `s3://${bucket}/${key}`;
    if (key.includes('\u0000') || key.split('/').includes('..') || !this.warehouse.contains(uri)) {
      throw invalidInput(`manifest path '${storePath}' is outside the warehouse`);
    }
    return uri;
  }
}

/** Listings and copies may quote an entity tag differently. */
const unquoted = (eTag: string) => eTag.replace(/"/g, '');
