import {
  BatchOperation,
  CatalogError,
  CatalogEvent,
  CatalogView,
  CreateTableVersion,
  ErrorCode,
  ObjectId,
  PageRequest,
  TableLine,
  requireLine,
  describeLine,
  refuseBranchOfUnmanaged,
  TableState,
  VersionRange,
  VersionRecord,
  branchLocation,
  decideBatch,
  decideDeleteTableBranch,
  findLine,
  manifestFile,
  decideCreateTableVersion,
  decideRecordTableDataChanged,
  decideDeleteTableVersions,
  versionsInRanges,
  displayId,
  invalidInput,
  listTableVersions,
  requireTable,
  requireVersion,
  takePage,
} from '@app/catalog';
import { FinalisedManifest, ManifestFinaliser, StagingCheck, TagFiles, listManifestsOnDisk } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import { CatalogWriter, Prepared, Rider, eventMetadata } from './catalog-writer';
import { DataChangeHandoff } from './data-change-handoff';
import { RequestContext } from './request-context';
import { StoredVersions } from './stored-versions';
import { tableVersionJson } from './version-json';
import { stateFor } from './request-state';

type VersionCreated = Extract<CatalogEvent, { type: 'TableVersionCreated' }>;

export class VersionService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly finaliser: ManifestFinaliser,
    /** `journaled` when the event store records manifests with their events (see ManifestFinaliser). */
    private readonly durability: 'synced' | 'journaled' = 'synced',
    /** This process's own writes, whose data changes ride on their commits. */
    private readonly handoff: DataChangeHandoff | undefined,
    /** The warehouse's files: the manifests of unmanaged tables are listed there. */
    private readonly files: TableFiles,
    /** Versions whose manifests a client's own cleanup removed are found and recorded deleted. */
    private readonly stored?: StoredVersions,
  ) {
    this.tags = new TagFiles(files);
  }

  /** Lance's tags of a table, read where they live (`_refs/tags/`). */
  private readonly tags: TagFiles;

  private view(ctx: RequestContext) {
    return stateFor(this.projections, ctx);
  }

  async listTableVersions(ctx: RequestContext, id: ObjectId, page: PageRequest, descending: boolean, branch?: string) {
    let view = await this.view(ctx);
    const table = requireTable(view, id);
    if (table.managedVersioning) {
      if (branch !== undefined && (await this.branchFilesGone(table, branch))) {
        await this.writer.execute(ctx, 'DeleteTableBranch', (now) => ({
          events: decideDeleteTableBranch(now, id, branch, 'its files were removed outside the catalog (a Lance client deleted the branch)'),
          result: () => undefined,
        }));
        view = await this.view(ctx);
      }
      // The latest version alone (what a Lance client asks before every read) is never cleaned up;
      // any longer listing is checked against the manifests in storage first.
      if (this.stored && !(page.limit === 1 && descending) && (await this.stored.reconcile(ctx, id, branch)).length) view = await this.view(ctx);
      const result = listTableVersions(view, id, page, descending, branch);
      await this.published(table.location, result.items);
      return { versions: result.items.map(tableVersionJson), page_token: result.pageToken };
    }
    refuseBranchOfUnmanaged(table, branch);
    // The page is cut from the manifests' names; only its own manifests' attributes are read.
    const after = page.pageToken === undefined ? undefined : Number(page.pageToken);
    let pageToken: string | null = null;
    const onDisk = await listManifestsOnDisk(this.files, table.location, (versions) => {
      const ordered = (descending ? [...versions].reverse() : versions).filter(
        (v) => after === undefined || (descending ? v < after : v > after),
      );
      const result = takePage(ordered, page.limit, String);
      pageToken = result.pageToken;
      return result.items;
    });
    return { versions: (descending ? onDisk.reverse() : onDisk).map(tableVersionJson), page_token: pageToken };
  }

  /**
   * Lance's own branch delete removes the branch's files without a call to the catalog; before
   * Lance makes a branch it lists the branch's versions, so a branch whose latest manifest is gone
   * is found here and recorded deleted (a branch being made has its first manifest before the
   * catalog lists any version of it).
   */
  private async branchFilesGone(table: TableState, branch: string): Promise<boolean> {
    const line = findLine(table, branch);
    if (!line || line.latestVersion === undefined) return false;
    const record = line.versions.get(line.latestVersion)!;
    const manifest = manifestFile(branchLocation(table.location, branch), record.version, record.namingScheme);
    return (await this.files.head(manifest)) === undefined;
  }

  async describeTableVersion(ctx: RequestContext, id: ObjectId, version: number | undefined, branch?: string) {
    const table = requireTable(await this.view(ctx), id);
    const line = requireLine(table, branch);
    const record = table.managedVersioning
      ? requireVersion(line, version ?? latestOf(line))
      : await this.versionOnDisk(table, version);
    if (version !== undefined) await this.stored?.requireStored(ctx, line, version);
    if (table.managedVersioning) await this.published(table.location, [record]);
    return { version: tableVersionJson(record) };
  }

  /**
   * The final manifests of the versions about to be served (or read), made where a committing
   * process ended between recording its version and copying its manifest (see
   * ObjectStoreManifestFinaliser).
   */
  async published(tableLocation: string, records: VersionRecord[]): Promise<void> {
    const pending = records.filter((r) => r.stagingManifest);
    if (!this.finaliser.repair || pending.length === 0) return;
    for (let i = 0; i < pending.length; i += 8) {
      await Promise.all(pending.slice(i, i + 8).map((r) => this.finaliser.repair!(r, tableLocation)));
    }
  }

  /** `writer`: the id of the server's own writer connection that made this commit, if it says so. */
  createTableVersion(ctx: RequestContext, cmd: CreateTableVersion, writer?: string) {
    return this.commit(ctx, cmd, (view) => this.handoff?.riderFor(view, writer, cmd.id, cmd.version, cmd.branch));
  }

  /**
   * Commits a manifest the catalog staged itself in the line's `_versions/` (under Lance's staging
   * name), by the very path of `version/create`: the same decision, reference check, finalisation,
   * event and answer as a client's commit. The change it makes is recorded beside it, as the
   * server's writes are: a `TableDataChanged` of `operation` in the same append, under a transaction
   * of its own (`<operation>Table`), whose id is answered as `change_transaction_id`.
   */
  async commitStagedChange(ctx: RequestContext, cmd: CreateTableVersion, operation: string) {
    const metadata = eventMetadata(ctx, `${operation}Table`);
    const committed = await this.commit(ctx, cmd, (view) => ({
      // Stamped when it rides, so it is not older than the commit it records.
      metadata: { ...metadata, occurredAt: new Date().toISOString() },
      events: decideRecordTableDataChanged(view, { id: cmd.id, operation, version: cmd.version, branch: cmd.branch }),
      settled: () => undefined,
    }));
    return { ...committed, change_transaction_id: metadata.transactionId };
  }

  private commit(ctx: RequestContext, cmd: CreateTableVersion, riderFor: (view: CatalogView) => Rider | undefined) {
    const checked = this.checkStagingEarly(ctx, cmd);
    return this.writer.execute(ctx, 'CreateTableVersion', (view) => {
      const events = decideCreateTableVersion(view, cmd);
      const created = versionCreatedIn(events);
      const staged = { staging: cmd.stagingManifestPath, event: created, tableLocation: requireTable(view, cmd.id).location, checked };
      const rider = riderFor(view);
      return {
        events,
        ...(rider ? { riders: [rider] } : {}),
        prepare: () => this.finalise(ctx, [staged]),
        result: (transactionId: string | undefined) => ({ version: versionJsonOf(created), transaction_id: transactionId }),
      };
    });
  }

  /**
   * Commits of one database are decided and appended one group at a time; a staging manifest read
   * inside that turn holds up every commit queued behind it. Where finalising is only that read (an
   * object store), it starts here, against the table's location as this process last folded it (no
   * catch-up: the commit uses it only when its decision names the same location, and reads again
   * otherwise).
   */
  private checkStagingEarly(ctx: RequestContext, cmd: CreateTableVersion): StagingCheck | undefined {
    if (!this.finaliser.checkStaging) return undefined;
    const table = this.projections.get(ctx.database).state.table(cmd.id);
    return table ? this.finaliser.checkStaging(cmd.stagingManifestPath, table.location) : undefined;
  }

  async batchDeleteTableVersions(ctx: RequestContext, id: ObjectId, ranges: VersionRange[], branch?: string) {
    const tagged = await this.taggedVersions(ctx, id, ranges, branch);
    return this.writer.execute(ctx, 'BatchDeleteTableVersions', (view) => {
      const events = decideDeleteTableVersions(view, id, ranges, branch, tagged);
      return { events, result: (transactionId) => ({ deleted_count: deletedCount(events), transaction_id: transactionId }) };
    });
  }

  /**
   * The versions among those `ranges` hold that the line's tags point at, each with a tag's name,
   * read from Lance's `_refs/` (tags are Lance's own) only when the ranges hold a version at all. A
   * tag file Lance could not read either protects nothing.
   */
  async taggedVersions(ctx: RequestContext, id: ObjectId, ranges: readonly VersionRange[], branch?: string): Promise<ReadonlyMap<number, string>> {
    const table = (await this.view(ctx)).table(id);
    const line = table?.managedVersioning ? findLine(table, branch) : undefined;
    if (!table || !line || versionsInRanges(line, ranges).length === 0) return new Map();
    return this.tags.versionsTagged(table.location, branch);
  }

  batchCreateTableVersions(ctx: RequestContext, entries: CreateTableVersion[]) {
    const operations: BatchOperation[] = entries.map((command) => ({ kind: 'create_table_version', command }));
    return this.writer.execute(ctx, 'BatchCreateTableVersions', (view, metadata) => {
      const decision = decideBatch(view, operations, metadata);
      const staged = stagedVersions(view, operations, decision.perOperation);
      return {
        events: decision.events,
        prepare: () => this.finalise(ctx, staged),
        result: (transactionId) => ({
          versions: decision.events.filter((e): e is VersionCreated => e.type === 'TableVersionCreated').map(versionJsonOf),
          transaction_id: transactionId,
        }),
      };
    });
  }

  /**
   * Copies every staging manifest to its final name; on failure, removes the ones already copied.
   * A manifest that references files outside its table's location is refused before its copy (the
   * server would otherwise read them for whoever committed it, with its own credentials).
   * Once the versions are recorded the staging manifests are removed: nothing reads them after
   * that (a retried commit writes a new one), and `_versions/` would otherwise keep one per commit.
   */
  async finalise(ctx: RequestContext, staged: StagedVersion[]): Promise<Prepared> {
    const finalised: Array<[FinalisedManifest, VersionCreated]> = [];
    const undo = async () => {
      // A deferred copy (object store) was never made. A final manifest stays when the catalog now
      // holds its version from another commit (the same manifest retried elsewhere): when unsure, too.
      const made = finalised.filter(([manifest]) => !manifest.deferred);
      if (made.length === 0) return;
      // Read from the head as of now, never from the request's arrival: the append that failed may
      // have been made (its answer lost), and another commit may have recorded it since.
      const view = await this.projections.current(ctx.database).then((p) => p.state, () => undefined);
      for (const [manifest, event] of made.reverse()) {
        const table = view?.table(event.data.table);
        const line = findLine(table, event.data.branch);
        const recorded = view ? table?.uuid === event.data.tableUuid && !!line?.versions.has(event.data.version) : true;
        const record = recorded ? line?.versions.get(event.data.version) : undefined;
        await this.finaliser.discard(manifest, recorded, record && { size: record.manifestSize, eTag: record.eTag });
      }
    };
    const files: Prepared['files'] = [];
    try {
      for (const { staging, event, tableLocation, operation, checked } of staged) {
        const manifest = await this.finaliser.finalise(staging, event.data.manifestPath, this.durability, tableLocation, checked).catch((e) => {
          // As a batch's decisions name the operation they refuse.
          throw e instanceof CatalogError && operation ? new CatalogError(e.code, `operation ${operation} (create_table_version): ${e.message}`, e.detail) : e;
        });
        finalised.push([manifest, event]);
        // Readers are handed the size as the manifest's own: one that is not is refused, not recorded.
        if (event.data.manifestSize !== undefined && event.data.manifestSize !== manifest.size) {
          const refusal = `manifest_size ${event.data.manifestSize} is not the size of the staged manifest (${manifest.size} bytes)`;
          throw invalidInput(operation ? `operation ${operation} (create_table_version): ${refusal}` : refusal);
        }
        if (this.durability === 'journaled' && manifest.bytes) files.push({ path: manifest.path, bytes: manifest.bytes });
        event.data.manifestSize ??= manifest.size;
        if (manifest.deferred) event.data.stagingManifest = { path: staging, ...(manifest.eTag !== undefined ? { eTag: manifest.eTag } : {}) };
      }
    } catch (e) {
      await undo();
      throw e;
    }
    const deferred = finalised.filter(([manifest]) => manifest.deferred).map(([manifest]) => manifest);
    return {
      undo,
      files,
      ...(deferred.length && this.finaliser.publish
        ? { published: async () => void (await Promise.all(deferred.map((manifest) => this.finaliser.publish!(manifest)))) }
        : {}),
      committed: () => {
        for (const [manifest] of finalised) this.finaliser.release(manifest);
      },
    };
  }

  private async versionOnDisk(table: TableState, version: number | undefined): Promise<VersionRecord> {
    const onDisk = await listManifestsOnDisk(this.files, table.location, (versions) => (version === undefined ? versions.slice(-1) : [version]));
    const record = version === undefined ? onDisk[onDisk.length - 1] : onDisk.find((v) => v.version === version);
    if (!record) {
      throw new CatalogError(
        ErrorCode.TableVersionNotFound,
        `version ${version ?? 'latest'} of table '${displayId(table.id)}' does not exist`,
      );
    }
    return record;
  }
}

function latestOf(table: TableLine): number {
  if (table.latestVersion === undefined) {
    throw new CatalogError(ErrorCode.TableVersionNotFound, `${describeLine(table)} has no version yet`);
  }
  return table.latestVersion;
}


/** The version a commit's events record (a branch's first commit also records the branch). */
export function versionCreatedIn(events: CatalogEvent[]): VersionCreated {
  return events.find((e): e is VersionCreated => e.type === 'TableVersionCreated')!;
}

export function versionJsonOf(event: VersionCreated) {
  const { table: _t, tableUuid: _u, branch: _b, ...record } = event.data;
  return tableVersionJson(record);
}

export function deletedCount(events: CatalogEvent[]): number {
  return events.reduce((n, e) => n + (e.type === 'TableVersionsDeleted' ? e.data.versions.length : 0), 0);
}

/** A version to record once its staging manifest is finalised, and the location its files must stay in. */
export interface StagedVersion {
  staging: string;
  event: VersionCreated;
  tableLocation: string;
  /** Its operation's place (from 1) in a batch of several. */
  operation?: number;
  /** Its staging manifest's check, started before the commit was decided. */
  checked?: StagingCheck;
}

/** The versions a batch creates; a table it declares has its location from the declaration. */
export function stagedVersions(view: CatalogView, operations: BatchOperation[], perOperation: CatalogEvent[][]): StagedVersion[] {
  const declared = new Map<string, string>();
  const staged: StagedVersion[] = [];
  operations.forEach((op, i) => {
    if (op.kind === 'declare_table') declared.set(op.command.tableUuid, op.command.location);
    if (op.kind !== 'create_table_version') return;
    const event = versionCreatedIn(perOperation[i]);
    const tableLocation = declared.get(event.data.tableUuid) ?? requireTable(view, event.data.table).location;
    staged.push({ staging: op.command.stagingManifestPath, event, tableLocation, ...(operations.length > 1 ? { operation: i + 1 } : {}) });
  });
  return staged;
}
