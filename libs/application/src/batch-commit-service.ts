import { randomUUID } from 'node:crypto';
import { BatchOperation, CatalogEvent, DeclareTable, ObjectId, Properties, VersionRange, CreateTableVersion, decideBatch, defaultTableLocation } from '@app/catalog';
import { Warehouse } from '@app/storage';
import { CatalogWriter } from './catalog-writer';
import { ClientStorageOptions } from './client-storage-options';
import { requireRightToSetPolicy } from './policy-rights';
import { RequestContext } from './request-context';
import { VersionService, deletedCount, stagedVersions, versionCreatedIn, versionJsonOf } from './version-service';

export type BatchCommitRequest =
  | { declare_table: { id: ObjectId; location?: string; properties: Properties; vendCredentials?: boolean } }
  | { create_table_version: CreateTableVersion }
  | { delete_table_versions: { id: ObjectId; ranges: VersionRange[]; branch?: string } }
  | { deregister_table: { id: ObjectId } };

/** BatchCommitTables: mixed operations over several tables, appended as one atomic batch of events. */
export class BatchCommitService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly versions: VersionService,
    private readonly warehouse: Warehouse,
    private readonly managedVersioning: boolean,
    private readonly clientOptions: ClientStorageOptions,
  ) {}

  async batchCommitTables(ctx: RequestContext, requests: BatchCommitRequest[]) {
    const operations: BatchOperation[] = [];
    const vend: boolean[] = [];
    for (const r of requests) {
      vend.push('declare_table' in r ? (r.declare_table.vendCredentials ?? true) : false);
      if ('declare_table' in r) operations.push({ kind: 'declare_table', command: await this.declaration(ctx, r.declare_table) });
      else if ('create_table_version' in r) operations.push({ kind: 'create_table_version', command: r.create_table_version });
      else if ('delete_table_versions' in r) {
        const { id, ranges, branch } = r.delete_table_versions;
        operations.push({ kind: 'delete_table_versions', ...r.delete_table_versions, tagged: await this.versions.taggedVersions(ctx, id, ranges, branch) });
      }
      else operations.push({ kind: 'deregister_table', id: r.deregister_table.id });
    }
    // Vended first, one per declared table: when any cannot be had, nothing is committed.
    const storageOptions = await Promise.all(
      operations.map((op, i) =>
        op.kind === 'declare_table' ? this.clientOptions.forTable(onTable(ctx, op.command.id), { id: op.command.id, uuid: op.command.tableUuid, location: op.command.location }, vend[i]) : undefined,
      ),
    );
    return this.writer.execute(ctx, 'BatchCommitTables', (view, metadata) => {
      const decision = decideBatch(view, operations, metadata);
      const staged = stagedVersions(view, operations, decision.perOperation);
      return {
        events: decision.events,
        prepare: () => this.versions.finalise(ctx, staged),
        result: (transactionId) => ({
          results: operations.map((op, i) => resultOf(op, decision.perOperation[i], transactionId, storageOptions[i])),
          transaction_id: transactionId,
        }),
      };
    });
  }

  private async declaration(ctx: RequestContext, req: { id: ObjectId; location?: string; properties: Properties }): Promise<DeclareTable> {
    requireRightToSetPolicy(ctx, req.properties);
    const tableUuid = randomUUID();
    const location = req.location
      ? await this.warehouse.resolveClientLocation(req.location, ctx.database)
      : defaultTableLocation(this.warehouse.databaseRoot(ctx.database), req.id, tableUuid);
    return { id: req.id, tableUuid, location, properties: req.properties, managedVersioning: this.managedVersioning };
  }
}

function resultOf(op: BatchOperation, events: CatalogEvent[], transactionId: string | undefined, storageOptions: Record<string, string> | undefined) {
  switch (op.kind) {
    case 'declare_table':
      return {
        declare_table: {
          location: op.command.location,
          storage_options: storageOptions,
          managed_versioning: op.command.managedVersioning,
          properties: op.command.properties,
          transaction_id: transactionId,
        },
      };
    case 'create_table_version':
      return {
        create_table_version: {
          version: versionJsonOf(versionCreatedIn(events)),
          transaction_id: transactionId,
        },
      };
    case 'delete_table_versions':
      return { delete_table_versions: { deleted_count: deletedCount(events), transaction_id: transactionId } };
    case 'deregister_table': {
      const e = events[0] as Extract<CatalogEvent, { type: 'TableDeregistered' }>;
      return { deregister_table: { id: e.data.table, location: e.data.location, transaction_id: transactionId } };
    }
  }
}

/**
 * The caller's level on one table of a batch, which its credentials for the table follow: by its
 * grants when they decide (the batch has no one subject whose level the edge could set), else its
 * credential's on the database.
 */
function onTable(ctx: RequestContext, id: ObjectId): RequestContext {
  if (!ctx.sees) return ctx;
  const level = ctx.sees.levelOn({ table: id });
  return { ...ctx, level: level === 'none' ? undefined : level };
}
