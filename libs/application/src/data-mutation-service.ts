import * as arrow from 'apache-arrow';
import type { Table as LanceTable } from '@lancedb/lancedb';
import { CatalogError, ErrorCode, ObjectId, invalidInput } from '@app/catalog';
import { DataService } from './data-service';
import { lanceInputError } from './lance-errors';
import { RequestContext } from './request-context';

/** Which table a request names, and on which branch (absent: main). */
export interface OnTable {
  id: ObjectId;
  branch?: string;
}

export interface MergeInsertOptions {
  on: string[];
  whenMatchedUpdateAll: boolean;
  whenMatchedUpdateAllFilter?: string;
  whenNotMatchedInsertAll: boolean;
  whenNotMatchedBySourceDelete: boolean;
  whenNotMatchedBySourceDeleteFilter?: string;
  timeoutMs?: number;
  useIndex?: boolean;
}

/**
 * Writes that change a table in place. Each opens the table through the catalog, lets Lance
 * commit (a `version/create` on managed tables), then records a TableDataChanged event.
 */
export class DataMutationService {
  constructor(private readonly data: DataService) {}

  private async mutate<R extends { version: number }>(
    ctx: RequestContext,
    target: OnTable,
    operation: string,
    change: (table: LanceTable) => Promise<R>,
    rows?: (result: R) => number,
    columns: string[] = [],
  ): Promise<R & { transaction_id: string | undefined }> {
    const table = await this.data.table(ctx, target.id, undefined, target.branch);
    const result = await this.data.use(ctx, table, 'write', async (dataset) => {
      try {
        if (columns.length) requireColumns(await dataset.schema(), columns);
        return await change(dataset);
      } catch (e) {
        // Only data brought in can fail to fit the schema; the other changes fail on their own terms.
        throw lanceInputError(e, `${operation} failed`, operation === 'MergeInsert');
      }
    });
    const transactionId = await this.data.recordDataChange(ctx, target.id, operation, result.version, rows?.(result), target.branch);
    return { ...result, transaction_id: transactionId };
  }

  async mergeInsert(ctx: RequestContext, target: OnTable, data: arrow.Table, o: MergeInsertOptions) {
    if (!o.on.length) throw invalidInput("merge_insert needs 'on': the column(s) that match rows");
    if (!o.whenMatchedUpdateAll && !o.whenNotMatchedInsertAll && !o.whenNotMatchedBySourceDelete) {
      throw invalidInput('merge_insert needs at least one of when_matched_update_all, when_not_matched_insert_all, when_not_matched_by_source_delete');
    }
    const r = await this.mutate(ctx, target, 'MergeInsert', async (t) => {
      let builder = t.mergeInsert(o.on);
      if (o.whenMatchedUpdateAll) builder = builder.whenMatchedUpdateAll(o.whenMatchedUpdateAllFilter ? { where: o.whenMatchedUpdateAllFilter } : undefined);
      if (o.whenNotMatchedInsertAll) builder = builder.whenNotMatchedInsertAll();
      if (o.whenNotMatchedBySourceDelete) {
        builder = builder.whenNotMatchedBySourceDelete(o.whenNotMatchedBySourceDeleteFilter ? { where: o.whenNotMatchedBySourceDeleteFilter } : undefined);
      }
      if (o.useIndex !== undefined) builder = builder.useIndex(o.useIndex);
      return builder.execute(data, o.timeoutMs ? { timeoutMs: o.timeoutMs } : {});
    }, (m) => m.numInsertedRows + m.numUpdatedRows + m.numDeletedRows);
    return {
      transaction_id: r.transaction_id,
      num_updated_rows: r.numUpdatedRows,
      num_inserted_rows: r.numInsertedRows,
      num_deleted_rows: r.numDeletedRows,
      version: r.version,
    };
  }

  async update(ctx: RequestContext, target: OnTable, predicate: string | undefined, updates: Array<[string, string]>) {
    if (!updates.length) throw invalidInput('updates must hold at least one [column, SQL expression] pair');
    const r = await this.mutate(
      ctx,
      target,
      'Update',
      (t) => t.update({ valuesSql: Object.fromEntries(updates), ...(predicate ? { where: predicate } : {}) }),
      (u) => u.rowsUpdated,
      updates.map(([column]) => column),
    );
    return { transaction_id: r.transaction_id, updated_rows: r.rowsUpdated, version: r.version };
  }

  async delete(ctx: RequestContext, target: OnTable, predicate: string) {
    if (!predicate.trim()) throw invalidInput("predicate must not be empty; use 'true' to delete every row");
    const r = await this.mutate(ctx, target, 'Delete', (t) => t.delete(predicate), (d) => d.numDeletedRows);
    return { transaction_id: r.transaction_id, num_deleted_rows: r.numDeletedRows, version: r.version };
  }

  async addColumns(ctx: RequestContext, target: OnTable, columns: Array<{ name: string; expression: string }>) {
    if (!columns.length) throw invalidInput('new_columns must hold at least one column');
    const r = await this.mutate(ctx, target, 'AddColumns', (t) => t.addColumns(columns.map((c) => ({ name: c.name, valueSql: c.expression }))));
    return { transaction_id: r.transaction_id, version: r.version };
  }

  /** Computed columns are declared empty, their expression kept as the field's binding; AlterTableBackfillColumns fills them. */
  async addComputedColumns(ctx: RequestContext, target: OnTable, columns: Array<{ name: string; expression: string }>) {
    const r = await this.mutate(ctx, target, 'AddColumns', (t) => t.addColumns({ computed: columns.map((c) => ({ name: c.name, valueSql: c.expression })) }));
    return { transaction_id: r.transaction_id, version: r.version };
  }

  async alterColumns(ctx: RequestContext, target: OnTable, alterations: Array<{ path: string; rename?: string; nullable?: boolean; dataType?: string }>) {
    if (!alterations.length) throw invalidInput('alterations must hold at least one change');
    const r = await this.mutate(ctx, target, 'AlterColumns', (t) => t.alterColumns(alterations), undefined, alterations.map((a) => a.path));
    return { transaction_id: r.transaction_id, version: r.version };
  }

  async dropColumns(ctx: RequestContext, target: OnTable, columns: string[]) {
    if (!columns.length) throw invalidInput('columns must name at least one column');
    const r = await this.mutate(ctx, target, 'DropColumns', (t) => t.dropColumns(columns), undefined, columns);
    return { transaction_id: r.transaction_id, version: r.version };
  }

  async updateFieldMetadata(ctx: RequestContext, target: OnTable, updates: Array<{ path: string; metadata: Record<string, string | null>; replace?: boolean }>) {
    if (!updates.length) throw invalidInput('updates must hold at least one field');
    // The schema after the change is read on the same open table, not by opening it again.
    const r = await this.mutate(
      ctx,
      target,
      'UpdateFieldMetadata',
      async (t) => {
        const result = await t.updateFieldMetadata(updates);
        const schema = await t.schema();
        const fields = updates.map((u) => ({ path: u.path, metadata: Object.fromEntries(schema.fields.find((f) => f.name === u.path)?.metadata ?? []) }));
        return { version: result.version, fields };
      },
      undefined,
      updates.map((u) => u.path),
    );
    return { transaction_id: r.transaction_id, version: r.version, fields: r.fields };
  }

  async stats(ctx: RequestContext, target: OnTable) {
    const table = await this.data.table(ctx, target.id, undefined, target.branch);
    return this.data.use(ctx, table, 'read', async (dataset) => {
      const s = await dataset.stats();
      const l = s.fragmentStats.lengths;
      return {
        total_bytes: s.totalBytes,
        num_rows: s.numRows,
        num_indices: s.numIndices,
        fragment_stats: {
          num_fragments: s.fragmentStats.numFragments,
          num_small_fragments: s.fragmentStats.numSmallFragments,
          lengths: { min: l.min, max: l.max, mean: l.mean, p25: l.p25, p50: l.p50, p75: l.p75, p99: l.p99 },
        },
      };
    });
  }
}

function requireColumns(schema: { fields: Array<{ name: string }> }, paths: string[]): void {
  const names = new Set(schema.fields.map((f) => f.name));
  const missing = paths.filter((p) => !names.has(p.split('.')[0]));
  if (missing.length) throw new CatalogError(ErrorCode.TableColumnNotFound, `column(s) ${missing.join(', ')} do not exist`);
}
