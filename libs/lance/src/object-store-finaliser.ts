import { CatalogError, ErrorCode, VersionRecord, invalidInput, isStagingManifestOf } from '@app/catalog';
import { StorageUnavailableError, Warehouse } from '@app/storage';
import { FinalisedManifest, ManifestFinaliser, StagingCheck } from './manifest-finaliser';
import { checkStoredManifest } from './stored-manifests';

/** How many final manifests a process remembers having seen in place, so each is looked at once. */
const CONFIRMED_CAPACITY = 100_000;

/**
 * Managed versioning on an object store, which offers no put-if-absent copy (Swift refuses
 * conditional requests; S3 has none for CopyObject). Two replicas can both find a version free, so
 * a copy made before the event store decides between them could land over the winner's. The copy
 * to the final name is therefore made only once the version is recorded, from the staging manifest
 * the record names: every copy of one version carries the same bytes, whoever makes it.
 *
 * - Before the record, the staging manifest is checked (present, no file outside its table) and
 *   nothing is written; a commit that loses its version leaves nothing to undo.
 * - After it, the committing process copies and checks the copy before answering, waiting out a
 *   store that is down for up to `publishWaitMs`, then in the background; the staging manifest is
 *   removed once the final one is in place, beside the answer rather than before it.
 * - A process that ended between the record and the copy leaves a recorded version without its
 *   final manifest: whoever serves that version first (`repair`) makes the copy from the record.
 */
export class ObjectStoreManifestFinaliser implements ManifestFinaliser {
  /** Final manifests known to be in place (`final\0staging`), oldest first. */
  private readonly confirmed = new Set<string>();
  /** Staging manifests being removed after their final manifests were placed. */
  private readonly removals = new Set<Promise<void>>();

  constructor(
    private readonly warehouse: Warehouse,
    private readonly onError: (message: string) => void = () => undefined,
    /** How long a commit waits, before it is answered, for a store that cannot take its copy. */
    private readonly publishWaitMs = 30_000,
    /** How long it goes on trying in the background after that. */
    private readonly backgroundRetryMs = 10 * 60_000,
  ) {}

  checkStaging(stagingStorePath: string, tableLocation: string): StagingCheck {
    const result = Promise.resolve().then(() => checkStoredManifest(this.warehouse.files, this.uri(stagingStorePath), tableLocation, stagingStorePath));
    // Whoever finalises with it awaits it; one that never does (a commit refused first) leaves no unhandled rejection.
    result.catch(() => undefined);
    return { stagingStorePath, tableLocation, result };
  }

  async finalise(
    stagingStorePath: string,
    finalStorePath: string,
    _durability: 'synced' | 'journaled',
    tableLocation: string,
    checked?: StagingCheck,
  ): Promise<FinalisedManifest> {
    const staging = this.uri(stagingStorePath);
    const final = this.uri(finalStorePath);
    const early = checked?.stagingStorePath === stagingStorePath && checked.tableLocation === tableLocation ? checked.result : undefined;
    const stagingInfo = await (early ?? checkStoredManifest(this.warehouse.files, staging, tableLocation, stagingStorePath));
    if (!stagingInfo) {
      throw invalidInput(`staging manifest '${stagingStorePath}' does not exist`, 'Write the staging manifest before creating the version.');
    }
    return { path: final, staging, size: stagingInfo.size, eTag: stagingInfo.eTag, created: false, deferred: { tableLocation }, checkedBytes: stagingInfo.bytes };
  }

  async publish(manifest: FinalisedManifest): Promise<void> {
    const tableLocation = manifest.deferred!.tableLocation;
    const deadline = Date.now() + this.publishWaitMs;
    for (;;) {
      try {
        return await this.place(manifest, tableLocation);
      } catch (e) {
        if (!(e instanceof StorageUnavailableError)) {
          this.onError(`the final manifest ${manifest.path} was not made: ${(e as Error).message}`);
          return;
        }
        if (Date.now() >= deadline) {
          this.onError(`the final manifest ${manifest.path} waits for the object store (${e.message}); tried again in the background, and made by whoever serves its version first`);
          this.retryInBackground(manifest, tableLocation);
          return;
        }
        await sleep(1000);
      }
    }
  }

  private retryInBackground(manifest: FinalisedManifest, tableLocation: string): void {
    const until = Date.now() + this.backgroundRetryMs;
    const attempt = () =>
      this.place(manifest, tableLocation).catch((e) => {
        if (e instanceof StorageUnavailableError && Date.now() < until) setTimeout(attempt, 5000).unref();
        else this.onError(`the final manifest ${manifest.path} was not made: ${(e as Error).message}`);
      });
    setTimeout(attempt, 5000).unref();
  }

  /**
   * The final manifest made, remembered; the staging manifest is then no longer needed. The bytes
   * checked before the record, when one read held them all, are written as they are: they are the
   * staging object the record names (same read, same entity tag), and a copy would make the store
   * read them again.
   */
  private async place(manifest: FinalisedManifest, tableLocation: string): Promise<void> {
    if (manifest.checkedBytes) await this.warehouse.files.write(manifest.path, manifest.checkedBytes);
    else await this.copyChecked(manifest.staging, manifest.path, manifest.eTag, tableLocation);
    this.confirm(manifest.path, manifest.staging);
    // The commit is answered without waiting for it: nothing reads a staging manifest once its
    // final one is in place, and a removal that fails leaves only an unread object behind.
    const removal = this.removeStaging(manifest)
      .catch(() => undefined)
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /** Resolves once every staging manifest whose removal has started is removed, or failed to be. */
  async removalsSettled(): Promise<void> {
    while (this.removals.size) await Promise.all([...this.removals]);
  }

  /** Publishing removes the staging manifest once its copy is in place. */
  release(): void {}

  /** Nothing was copied before the record. */
  async discard(_manifest: FinalisedManifest, _recordedByAnother: boolean): Promise<void> {}

  async repair(record: VersionRecord, tableLocation: string): Promise<boolean> {
    if (!record.stagingManifest) return true;
    const final = this.uri(record.manifestPath);
    const staging = this.uri(record.stagingManifest.path);
    if (this.confirmed.has(key(final, staging))) return true;
    const files = this.warehouse.files;
    if (!(await files.head(final))) {
      try {
        await this.copyChecked(staging, final, record.stagingManifest.eTag, tableLocation);
        this.onError(`the final manifest ${final} of a recorded version was not in place (its committing process ended before its copy, or is still making it); made from its staging manifest`);
      } catch (e) {
        if (e instanceof StorageUnavailableError) throw e;
        // Another process's copy may have landed, and removed the staging manifest, meanwhile.
        if (!(await files.head(final))) return false;
      }
    }
    this.confirm(final, staging);
    return true;
  }

  /**
   * Copies the staging manifest to its final name. A copy whose entity tag is not the one checked (a
   * staging object replaced since, or a multipart upload, whose tag a store's copy need not keep) is
   * checked itself and removed if refused: the final name never holds an unchecked manifest.
   */
  private async copyChecked(staging: string, final: string, eTag: string | undefined, tableLocation: string): Promise<void> {
    const files = this.warehouse.files;
    const copied = await files.copy(staging, final);
    if (eTag !== undefined && copied.eTag === eTag) return;
    try {
      await checkStoredManifest(files, final, tableLocation, staging.slice(staging.lastIndexOf('/') + 1));
    } catch (e) {
      if (e instanceof CatalogError && e.code !== ErrorCode.ServiceUnavailable) await files.remove(final).catch(() => undefined);
      throw e;
    }
  }

  private confirm(final: string, staging: string): void {
    const k = key(final, staging);
    this.confirmed.delete(k);
    this.confirmed.add(k);
    if (this.confirmed.size > CONFIRMED_CAPACITY) this.confirmed.delete(this.confirmed.values().next().value!);
  }

  /** Only a name of Lance's staging form (the final name, in either scheme, plus `-<uuid>`) beside the final one is removed. */
  private async removeStaging({ staging, path: final }: FinalisedManifest): Promise<void> {
    if (!isStagingManifestOf(staging, final)) return;
    await this.warehouse.files.remove(staging);
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

const key = (final: string, staging: string) => `${final}\u0000${staging}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());
