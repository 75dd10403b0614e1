import { CatalogError, ErrorCode, ObjectId, TableLine, VersionRecord, decideVersionsGone, findLine, lineLocation, manifestFile, requireLine, requireTable } from '@app/catalog';
import { ManifestFinaliser, manifestNamesOnDisk } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import { CatalogWriter } from './catalog-writer';
import type { ManifestJournal } from './manifest-journal';
import { RequestContext } from './request-context';
import { stateFor } from './request-state';

/** What a version found without its manifest is recorded with. */
export const MANIFEST_GONE = 'its manifest was removed from storage outside the catalog (a client cleaned up old versions)';

/**
 * Keeps the catalog's versions of a managed table in step with the manifests in storage. Lance's
 * own cleanup (the lancedb client's `optimize()`) removes old manifests without a call to the
 * catalog; the catalog notices when it lists a line's versions, when an operation names a version,
 * and when a worker looks after commits, and records the versions deleted with the reason, so no
 * answer names a version whose manifest is gone.
 */
export class StoredVersions {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly files: TableFiles,
    /** Makes a recorded version's final manifest that its committing process never copied. */
    private readonly finaliser?: Pick<ManifestFinaliser, 'repair'>,
    /** Where manifests are journaled: the rows of the versions recorded deleted are released. */
    private readonly journal?: Pick<ManifestJournal, 'forget'>,
  ) {}

  /**
   * Lists the line's manifests and records every version of it that has none (never the latest).
   * Each candidate is confirmed with a read of its own name first: an object store's listing may
   * lag behind a manifest just written, and a version recorded deleted is never served again.
   */
  async reconcile(ctx: RequestContext, id: ObjectId, branch?: string): Promise<number[]> {
    const line = await this.line(ctx, id, branch);
    if (!line?.managedVersioning || line.latestVersion === undefined) return [];
    const listed = await manifestNamesOnDisk(this.files, lineLocation(line));
    // Numbers first: a record is built only for a version whose manifest the listing lacks.
    const candidates = line.versions.keys().filter((version) => version !== line.latestVersion && !listed.has(version));
    const gone: number[] = [];
    for (const version of candidates) {
      const record = line.versions.get(version);
      if (record && !(await this.present(line, record))) gone.push(version);
    }
    return this.record(ctx, id, branch, gone, MANIFEST_GONE);
  }

  /**
   * Refuses a version of a managed line whose manifest is gone from storage (404 code 11), after
   * recording it deleted. The caller found the version in the line first: a version the line no
   * longer holds was recorded deleted meanwhile (the line is the state's own, folded in place).
   */
  async requireStored(ctx: RequestContext, line: TableLine, version: number): Promise<void> {
    if (!line.managedVersioning) return;
    const record = line.versions.get(version);
    if (!record) throw gone(line, version);
    if (version === line.latestVersion || (await this.present(line, record))) return;
    await this.record(ctx, line.id, line.branch, [version], MANIFEST_GONE);
    throw gone(line, version);
  }

  /**
   * Records versions deleted (those the line still has), with the reason; answers the ones
   * recorded. Their manifests are gone or about to go (an expiry removes them next), so the journal
   * lets go of them too, before the answer.
   */
  async record(ctx: RequestContext, id: ObjectId, branch: string | undefined, versions: number[], reason: string, transactionId?: string): Promise<number[]> {
    if (versions.length === 0) return [];
    const { recorded, manifests } = await this.writer.execute(ctx, 'DeleteTableVersions', (view) => {
      const events = decideVersionsGone(view, { id, branch, versions, reason, transactionId });
      const recorded = events.flatMap((e) => (e.type === 'TableVersionsDeleted' ? e.data.versions : []));
      const line = recorded.length ? requireLine(requireTable(view, id), branch) : undefined;
      const manifests = recorded.flatMap((v) => line?.versions.get(v)?.manifestPath ?? []);
      return { events, result: () => ({ recorded, manifests }) };
    });
    if (manifests.length) await this.journal?.forget(manifests);
    return recorded;
  }

  private async line(ctx: RequestContext, id: ObjectId, branch?: string): Promise<TableLine | undefined> {
    const view = await stateFor(this.projections, ctx);
    const table = requireTable(view, id);
    return findLine(table, branch) ? requireLine(table, branch) : undefined;
  }

  private async present(line: TableLine, record: VersionRecord): Promise<boolean> {
    if (record.stagingManifest && this.finaliser?.repair) return this.finaliser.repair(record, line.location);
    return (await this.files.head(manifestFile(lineLocation(line), record.version, record.namingScheme ?? line.namingScheme ?? 'V2'))) !== undefined;
  }
}

export function gone(line: TableLine, version: number): CatalogError {
  const where = line.branch === undefined ? '' : ` on branch '${line.branch}'`;
  return new CatalogError(ErrorCode.TableVersionNotFound, `version ${version}${where} no longer exists: its manifest was removed from storage`);
}

