import { randomUUID } from 'node:crypto';
import {
  CatalogError,
  CatalogEvent,
  ErrorCode,
  ObjectId,
  PageRequest,
  Properties,
  RegisterTableMode,
  TableLine,
  requireLine,
  TableState,
  decideDeclareTable,
  decideDeregisterTable,
  decideDropTable,
  decideRecordTableRestored,
  decideRegisterTable,
  decideRenameTable,
  defaultTableLocation,
  isOnlyDeclared,
  listAllTables,
  listTables,
  nameOf,
  parentOf,
  requireTable,
  requireVersion,
} from '@app/catalog';
import { LanceTables, checkStoredManifests, listManifestsOnDisk, manifestVersionsOnDisk } from '@app/lance';
import { Warehouse } from '@app/storage';
import type { StorageOptions } from '@app/config';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { ClientStorageOptions, VendedTable } from './client-storage-options';
import { requireRightToSetPolicy } from './policy-rights';
import { PurgeService } from './purge-service';
import { RequestContext } from './request-context';
import { lanceInputError } from './lance-errors';
import { StoredVersions } from './stored-versions';
import { stateFor } from './request-state';

export interface TableServiceOptions {
  managedVersioning: boolean;
  /** Schedules the purge of a dropped table's files; without it the files are kept. */
  purges?: PurgeService;
  /** Refuses (and records deleted) a version whose manifest a client's own cleanup removed. */
  stored?: StoredVersions;
  /** What callers are handed to reach a table's files. */
  clientOptions: ClientStorageOptions;
}

export interface DescribeTableRequest {
  id: ObjectId;
  version?: number;
  withTableUri: boolean;
  loadDetailedMetadata: boolean;
  checkDeclared: boolean;
  /** False leaves credentials out of the storage options (absent: they are answered). */
  vendCredentials?: boolean;
  /** Absent: the main branch. */
  branch?: string;
}

export class TableService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly warehouse: Warehouse,
    private readonly lance: LanceTables,
    private readonly options: TableServiceOptions,
  ) {}

  private view(ctx: RequestContext) {
    return stateFor(this.projections, ctx);
  }

  /**
   * The Lance storage options a caller reaches the table at `location` with: the warehouse's own
   * for the server's calls and its workers, what the vending port gives clients for that table at
   * their level otherwise (without credentials when the caller asks for none).
   */
  storageOptions(ctx: RequestContext, table: VendedTable, vendCredentials = true): StorageOptions | Promise<StorageOptions> {
    return this.options.clientOptions.forTable(ctx, table, vendCredentials);
  }

  private conditionalPut?: Promise<boolean>;

  /**
   * Without managed versioning clients commit to the store themselves, with a conditional PUT that
   * some S3-compatible stores refuse (Swift): such a table could never be written, so it is refused
   * when declared, saying why, rather than failing inside every client.
   */
  async requireClientCommits(): Promise<void> {
    if (this.options.managedVersioning || !this.warehouse.onObjectStore) return;
    this.conditionalPut ??= this.warehouse.supportsConditionalPut();
    const supported = await this.conditionalPut.catch((e) => {
      this.conditionalPut = undefined;
      throw e;
    });
    if (!supported) {
      throw new CatalogError(
        ErrorCode.Unsupported,
        `the warehouse's object store (${this.warehouse.root}) refuses conditional PUTs, which Lance needs to commit a table on its own`,
        'Run the catalog with MANAGED_VERSIONING=true (the default): the catalog then commits every version, with no conditional request.',
      );
    }
  }

  async declareTable(ctx: RequestContext, req: { id: ObjectId; location?: string; properties: Properties; vendCredentials?: boolean }) {
    requireRightToSetPolicy(ctx, req.properties);
    await this.requireClientCommits();
    const tableUuid = randomUUID();
    const location = req.location
      ? await this.warehouse.resolveClientLocation(req.location, ctx.database)
      : defaultTableLocation(this.warehouse.databaseRoot(ctx.database), req.id, tableUuid);
    const managedVersioning = this.options.managedVersioning;
    // Vended first: when none can be had, nothing is declared.
    const storageOptions = await this.storageOptions(ctx, { id: req.id, uuid: tableUuid, location }, req.vendCredentials ?? true);
    return this.writer.execute(ctx, 'DeclareTable', (view) => ({
      events: decideDeclareTable(view, { id: req.id, tableUuid, location, properties: req.properties, managedVersioning }),
      result: (transactionId) => ({
        location,
        storage_options: storageOptions,
        managed_versioning: managedVersioning,
        properties: req.properties,
        transaction_id: transactionId,
      }),
    }));
  }

  async registerTable(
    ctx: RequestContext,
    req: { id: ObjectId; location: string; mode: RegisterTableMode; properties: Properties },
  ) {
    requireRightToSetPolicy(ctx, req.properties);
    const location = await this.warehouse.resolveClientLocation(req.location, ctx.database);
    await this.requireClientCommits();
    const versions = await listManifestsOnDisk(this.warehouse.files, location);
    // Every version found becomes one the server reads: none may reference files outside the table.
    await checkStoredManifests(this.warehouse.files, location, versions);
    const tableUuid = randomUUID();
    const managedVersioning = this.options.managedVersioning;
    const storageOptions = await this.storageOptions(ctx, { id: req.id, uuid: tableUuid, location });
    return this.writer.execute(ctx, 'RegisterTable', (view) => ({
      events: decideRegisterTable(view, { ...req, location, tableUuid, managedVersioning, versions }),
      result: (transactionId) => ({ location, storage_options: storageOptions, properties: req.properties, transaction_id: transactionId }),
    }));
  }

  async describeTable(ctx: RequestContext, req: DescribeTableRequest) {
    const table = requireLine(requireTable(await this.view(ctx), req.id), req.branch);
    if (req.version !== undefined && table.managedVersioning) requireVersion(table, req.version);
    const answer: Record<string, unknown> = {
      location: table.location,
      storage_options: await this.storageOptions(ctx, table, req.vendCredentials ?? true),
      properties: table.properties,
      managed_versioning: table.managedVersioning,
    };
    if (req.withTableUri) answer.table_uri = table.location.includes('://') ? table.location : `file://${table.location}`;
    const onlyDeclared = await this.onlyDeclared(table);
    if (req.checkDeclared || req.loadDetailedMetadata) answer.is_only_declared = onlyDeclared;
    if (table.managedVersioning && table.latestVersion !== undefined) answer.version = req.version ?? table.latestVersion;
    if (req.loadDetailedMetadata && !onlyDeclared) {
      const dataset = table.managedVersioning
        ? await this.lance.open(ctx.database, [...table.id], { version: req.version, branch: table.branch })
        : await this.lance.openAtLocation(table.location, req.version);
      try {
        const details = await this.lance.describeDetails(dataset, table.location);
        Object.assign(answer, {
          table: nameOf(table.id),
          namespace: parentOf(table.id),
          version: details.version,
          schema: details.schema,
          stats: details.stats,
          metadata: details.metadata,
        });
      } finally {
        dataset.close();
      }
    }
    return answer;
  }

  async tableExists(ctx: RequestContext, req: { id: ObjectId; version?: number }) {
    const table = requireTable(await this.view(ctx), req.id);
    if (req.version !== undefined) {
      if (table.managedVersioning) requireVersion(table, req.version);
      else if (!(await manifestVersionsOnDisk(this.warehouse.files, table.location)).includes(req.version)) {
        throw new CatalogError(ErrorCode.TableVersionNotFound, `version ${req.version} of the table does not exist`);
      }
    }
    return {};
  }

  async listTables(ctx: RequestContext, id: ObjectId, page: PageRequest, includeDeclared: boolean) {
    const view = await this.view(ctx);
    const sees = ctx.sees && ctx.sees.rankOn({ namespace: id }) === 0 ? ctx.sees : undefined;
    const result = listTables(view, id, page, includeDeclared, sees);
    return { tables: result.items, page_token: result.pageToken };
  }

  async listAllTables(ctx: RequestContext, page: PageRequest, includeDeclared: boolean) {
    const view = await this.view(ctx);
    const sees = ctx.sees && ctx.sees.rankOn({ database: true }) === 0 ? ctx.sees : undefined;
    const result = listAllTables(view, page, includeDeclared, ctx.delimiter, sees);
    return { tables: result.items, page_token: result.pageToken };
  }

  async dropTable(ctx: RequestContext, id: ObjectId) {
    const purges = this.options.purges;
    let scheduled: PendingPurgeRef[] = [];
    const answer = await this.writer.execute(ctx, 'DropTable', (view) => {
      const events = decideDropTable(view, id, purges?.schedule());
      scheduled = scheduledPurges(events);
      const table = view.table(id)!;
      return { events, result: (transactionId) => removedTableAnswer(table, transactionId) };
    });
    await queueScheduled(purges, ctx.database, scheduled);
    return answer;
  }

  deregisterTable(ctx: RequestContext, id: ObjectId) {
    return this.writer.execute(ctx, 'DeregisterTable', (view) => {
      const events = decideDeregisterTable(view, id);
      const table = view.table(id)!;
      return { events, result: (transactionId) => removedTableAnswer(table, transactionId) };
    });
  }

  renameTable(ctx: RequestContext, req: { id: ObjectId; newTableName: string; newNamespace?: ObjectId }) {
    return this.writer.execute(ctx, 'RenameTable', (view) => ({
      events: decideRenameTable(view, req),
      result: (transactionId) => ({ transaction_id: transactionId }),
    }));
  }

  /**
   * Restoring writes a new manifest, so it goes through Lance; on a managed table Lance commits
   * through this catalog (a TableVersionCreated of its own), and the restore itself is recorded too.
   */
  async restoreTable(ctx: RequestContext, req: { id: ObjectId; version: number; branch?: string }) {
    const table = requireLine(requireTable(await this.view(ctx), req.id), req.branch);
    if (table.managedVersioning) {
      requireVersion(table, req.version);
      await this.options.stored?.requireStored(ctx, table, req.version);
    } else if (!(await manifestVersionsOnDisk(this.warehouse.files, table.location)).includes(req.version)) {
      throw new CatalogError(ErrorCode.TableVersionNotFound, `version ${req.version} of the table does not exist`);
    }
    let newVersion: number;
    try {
      const dataset = table.managedVersioning
        ? await this.lance.open(ctx.database, [...table.id], { branch: table.branch })
        : await this.lance.openAtLocation(table.location);
      try {
        newVersion = await this.lance.restore(dataset, req.version);
      } finally {
        dataset.close();
      }
    } catch (e) {
      throw lanceInputError(e, 'restoring the table failed', false, req.version);
    }
    return this.writer.execute(ctx, 'RestoreTable', (view) => ({
      events: decideRecordTableRestored(view, { id: req.id, fromVersion: req.version, version: newVersion, ...(table.branch !== undefined ? { branch: table.branch } : {}) }),
      result: (transactionId) => ({ transaction_id: transactionId, version: newVersion }),
    }));
  }

  /** At once for a managed table (its versions are the catalog's); from its files otherwise. */
  private onlyDeclared(table: TableLine): boolean | Promise<boolean> {
    if (table.managedVersioning) return isOnlyDeclared(table);
    return manifestVersionsOnDisk(this.warehouse.files, table.location).then((versions) => versions.length === 0);
  }
}

type PendingPurgeRef = { tableUuid: string; purgeAfterMillis: number };

/** The purges a drop's events schedule. */
export function scheduledPurges(events: CatalogEvent[]): PendingPurgeRef[] {
  return events.flatMap((e) => (e.type === 'TablePurgeScheduled' ? [{ tableUuid: e.data.tableUuid, purgeAfterMillis: e.data.purgeAfterMillis }] : []));
}

/**
 * Queues the purges a drop recorded. The drop is durable already: with Redis away it still
 * succeeds, and the workers' sweep queues the purge later.
 */
export async function queueScheduled(purges: PurgeService | undefined, database: string, scheduled: PendingPurgeRef[]): Promise<void> {
  if (!purges || scheduled.length === 0) return;
  await purges.queuePurges(database, scheduled).catch(() => undefined);
}

function removedTableAnswer(table: TableState, transactionId: string | undefined) {
  return { id: table.id, location: table.location, properties: table.properties, transaction_id: transactionId };
}
