import {
  BatchOperation,
  CatalogError,
  CatalogEvent,
  CreateTableVersion,
  ErrorCode,
  ObjectId,
  PageRequest,
  TableState,
  VersionRange,
  VersionRecord,
  decideBatch,
  decideCreateTableVersion,
  decideDeleteTableVersions,
  displayId,
  listTableVersions,
  requireTable,
  requireVersion,
  takePage,
} from '@app/catalog';
import { FinalisedManifest, ManifestFinaliser, listManifestsOnDisk } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import { CatalogWriter, Prepared, unavailableAs503 } from './catalog-writer';
import { DataChangeHandoff } from './data-change-handoff';
import { RequestContext } from './request-context';
import { tableVersionJson } from './version-json';

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
  ) {}

  private view(ctx: RequestContext) {
    return unavailableAs503(() => this.projections.current(ctx.database)).then((p) => p.state);
  }

  async listTableVersions(ctx: RequestContext, id: ObjectId, page: PageRequest, descending: boolean) {
    const view = await this.view(ctx);
    const table = requireTable(view, id);
    if (table.managedVersioning) {
      const result = listTableVersions(view, id, page, descending);
      return { versions: result.items.map(tableVersionJson), page_token: result.pageToken };
    }
    const onDisk = await listManifestsOnDisk(this.files, table.location);
    const after = page.pageToken === undefined ? undefined : Number(page.pageToken);
    const ordered = (descending ? onDisk.reverse() : onDisk).filter(
      (v) => after === undefined || (descending ? v.version < after : v.version > after),
    );
    const result = takePage(ordered, page.limit, (v) => String(v.version));
    return { versions: result.items.map(tableVersionJson), page_token: result.pageToken };
  }

  async describeTableVersion(ctx: RequestContext, id: ObjectId, version: number | undefined) {
    const table = requireTable(await this.view(ctx), id);
    const record = table.managedVersioning
      ? requireVersion(table, version ?? latestOf(table))
      : await this.versionOnDisk(table, version);
    return { version: tableVersionJson(record) };
  }

  /** `writer`: the id of the server's own writer connection that made this commit, if it says so. */
  createTableVersion(ctx: RequestContext, cmd: CreateTableVersion, writer?: string) {
    return this.writer.execute(ctx, 'CreateTableVersion', (view) => {
      const events = decideCreateTableVersion(view, cmd);
      const rider = this.handoff?.riderFor(view, writer, cmd.id, cmd.version);
      return {
        events,
        ...(rider ? { riders: [rider] } : {}),
        prepare: () => this.finalise(ctx, [[cmd.stagingManifestPath, events[0] as VersionCreated]]),
        result: (transactionId) => ({ version: versionJsonOf(events[0] as VersionCreated), transaction_id: transactionId }),
      };
    });
  }

  batchDeleteTableVersions(ctx: RequestContext, id: ObjectId, ranges: VersionRange[]) {
    return this.writer.execute(ctx, 'BatchDeleteTableVersions', (view) => {
      const events = decideDeleteTableVersions(view, id, ranges);
      return { events, result: (transactionId) => ({ deleted_count: deletedCount(events), transaction_id: transactionId }) };
    });
  }

  batchCreateTableVersions(ctx: RequestContext, entries: CreateTableVersion[]) {
    const operations: BatchOperation[] = entries.map((command) => ({ kind: 'create_table_version', command }));
    return this.writer.execute(ctx, 'BatchCreateTableVersions', (view, metadata) => {
      const decision = decideBatch(view, operations, metadata);
      return {
        events: decision.events,
        prepare: () => this.finalise(ctx, stagedVersions(operations, decision.perOperation)),
        result: (transactionId) => ({
          versions: decision.events.map((e) => versionJsonOf(e as VersionCreated)),
          transaction_id: transactionId,
        }),
      };
    });
  }

  /**
   * Copies every staging manifest to its final name; on failure, removes the ones already copied.
   * Once the versions are recorded the staging manifests are removed: nothing reads them after
   * that (a retried commit writes a new one), and `_versions/` would otherwise keep one per commit.
   */
  async finalise(ctx: RequestContext, staged: Array<[string, VersionCreated]>): Promise<Prepared> {
    const finalised: Array<[FinalisedManifest, VersionCreated]> = [];
    const undo = async () => {
      // A final manifest stays when the catalog now holds its version from another commit (the
      // same manifest retried elsewhere, or on an object store a racing copy): when unsure, too.
      const view = await this.projections.current(ctx.database).then((p) => p.state, () => undefined);
      for (const [manifest, event] of [...finalised].reverse()) {
        const table = view?.table(event.data.table);
        const recorded = view ? table?.uuid === event.data.tableUuid && table.versions.has(event.data.version) : true;
        await this.finaliser.discard(manifest, recorded, recorded ? table?.versions.get(event.data.version)?.manifestSize : undefined);
      }
    };
    const files: Prepared['files'] = [];
    try {
      for (const [staging, event] of staged) {
        const manifest = await this.finaliser.finalise(staging, event.data.manifestPath, this.durability);
        finalised.push([manifest, event]);
        if (this.durability === 'journaled' && manifest.bytes) files.push({ path: manifest.path, bytes: manifest.bytes });
        event.data.manifestSize ??= manifest.size;
      }
    } catch (e) {
      await undo();
      throw e;
    }
    return {
      undo,
      files,
      committed: () => {
        for (const [manifest] of finalised) this.finaliser.release(manifest);
      },
    };
  }

  private async versionOnDisk(table: TableState, version: number | undefined): Promise<VersionRecord> {
    const onDisk = await listManifestsOnDisk(this.files, table.location);
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

function latestOf(table: TableState): number {
  if (table.latestVersion === undefined) {
    throw new CatalogError(ErrorCode.TableVersionNotFound, `table '${displayId(table.id)}' has no version yet`);
  }
  return table.latestVersion;
}

export function versionJsonOf(event: VersionCreated) {
  const { table: _t, tableUuid: _u, ...record } = event.data;
  return tableVersionJson(record);
}

export function deletedCount(events: CatalogEvent[]): number {
  return events.reduce((n, e) => n + (e.type === 'TableVersionsDeleted' ? e.data.versions.length : 0), 0);
}

export function stagedVersions(operations: BatchOperation[], perOperation: CatalogEvent[][]): Array<[string, VersionCreated]> {
  const staged: Array<[string, VersionCreated]> = [];
  operations.forEach((op, i) => {
    if (op.kind === 'create_table_version') staged.push([op.command.stagingManifestPath, perOperation[i][0] as VersionCreated]);
  });
  return staged;
}
