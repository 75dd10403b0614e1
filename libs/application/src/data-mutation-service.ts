import { ObjectId, Properties, PropertyLimits, invalidInput } from '@app/catalog';
import { ArrowBody, ColumnAlteration, DataPlaneOp, DataPlaneResult, FieldMetadataUpdate, MergeInsertOptions } from '@app/lance';
import { DataService } from './data-service';
import { requireRightToSetPolicy } from './policy-rights';
import { RequestContext } from './request-context';

export type { MergeInsertOptions };

/** Which table a request names, and on which branch (absent: main). */
export interface OnTable {
  id: ObjectId;
  branch?: string;
}


/**
 * Writes that change a table in place. Each runs on the data plane, which opens the table through
 * the catalog and lets Lance commit (a `version/create` on managed tables), then records a
 * TableDataChanged event.
 */
export class DataMutationService {
  constructor(private readonly data: DataService) {}

  private async mutate<K extends 'mergeInsert' | 'update' | 'delete' | 'addColumns' | 'alterColumns' | 'dropColumns' | 'updateFieldMetadata'>(
    ctx: RequestContext,
    target: OnTable,
    operation: string,
    op: Omit<Extract<DataPlaneOp, { kind: K }>, 'table'>,
    rows?: (result: DataPlaneResult<K>) => number,
    properties?: { set: Properties; limits: PropertyLimits },
  ): Promise<DataPlaneResult<K> & { transaction_id: string | undefined }> {
    const table = await this.data.table(ctx, target.id, undefined, target.branch);
    // Only data brought in can fail to fit the schema; the other changes fail on their own terms.
    const result = await this.data.run<K>(ctx, table, op, `${operation} failed`, operation === 'MergeInsert');
    const transactionId = await this.data.recordDataChange(ctx, target.id, operation, result.version, rows?.(result), target.branch, properties);
    return { ...result, transaction_id: transactionId };
  }

  /**
   * MergeInsertIntoTable. A clause's filter alone asks for its clause (`when_matched_update_all_filt`:
   * update the matched rows it selects). With no clause at all the merge changes nothing (the
   * spec's flags all default to false): it answers the table's version and zero counts. A table
   * only declared has no rows to merge with: the merge creates it with the rows brought in, as the
   * spec says.
   */
  async mergeInsert(ctx: RequestContext, target: OnTable, data: ArrowBody, requested: MergeInsertOptions) {
    const o: MergeInsertOptions = {
      ...requested,
      whenMatchedUpdateAll: requested.whenMatchedUpdateAll || requested.whenMatchedUpdateAllFilter !== undefined,
      whenNotMatchedBySourceDelete: requested.whenNotMatchedBySourceDelete || requested.whenNotMatchedBySourceDeleteFilter !== undefined,
    };
    const table = await this.data.table(ctx, target.id, undefined, target.branch);
    if (!o.on.length) throw invalidInput("merge_insert needs 'on': the column(s) that match rows");
    if (target.branch === undefined && (await this.data.isOnlyDeclared(table))) {
      const written = await this.data.writeFresh(ctx, table, data, 'create', 'Create');
      return { transaction_id: written.transactionId, num_updated_rows: 0, num_inserted_rows: data.rows, num_deleted_rows: 0, version: written.version };
    }
    if (!o.whenMatchedUpdateAll && !o.whenNotMatchedInsertAll && !o.whenNotMatchedBySourceDelete) {
      // An unmanaged table's version is Lance's to tell.
      const version = table.latestVersion ?? (await this.data.use(ctx, table, 'read', (t) => t.version()));
      return { num_updated_rows: 0, num_inserted_rows: 0, num_deleted_rows: 0, version };
    }
    const r = await this.mutate<'mergeInsert'>(ctx, target, 'MergeInsert', { kind: 'mergeInsert', body: data.bytes, options: o }, (m) => m.numInsertedRows + m.numUpdatedRows + m.numDeletedRows);
    return {
      transaction_id: r.transaction_id,
      num_updated_rows: r.numUpdatedRows,
      num_inserted_rows: r.numInsertedRows,
      num_deleted_rows: r.numDeletedRows,
      version: r.version,
    };
  }

  /** `properties`: stored on the table (over those it has) with the update's record, held to `limits` as a whole. */
  async update(
    ctx: RequestContext,
    target: OnTable,
    predicate: string | undefined,
    updates: Array<[string, string]>,
    properties?: { set: Properties; limits: PropertyLimits },
  ) {
    if (!updates.length) throw invalidInput('updates must hold at least one [column, SQL expression] pair');
    if (properties) requireRightToSetPolicy(ctx, properties.set);
    const r = await this.mutate<'update'>(ctx, target, 'Update', { kind: 'update', predicate, updates }, (u) => u.rowsUpdated, properties);
    return { transaction_id: r.transaction_id, updated_rows: r.rowsUpdated, version: r.version };
  }

  async delete(ctx: RequestContext, target: OnTable, predicate: string) {
    if (!predicate.trim()) throw invalidInput("predicate must not be empty; use 'true' to delete every row");
    const r = await this.mutate<'delete'>(ctx, target, 'Delete', { kind: 'delete', predicate }, (d) => d.numDeletedRows);
    return { transaction_id: r.transaction_id, num_deleted_rows: r.numDeletedRows, version: r.version };
  }

  async addColumns(ctx: RequestContext, target: OnTable, columns: Array<{ name: string; expression: string }>) {
    if (!columns.length) throw invalidInput('new_columns must hold at least one column');
    const r = await this.mutate<'addColumns'>(ctx, target, 'AddColumns', { kind: 'addColumns', columns, computed: false });
    return { transaction_id: r.transaction_id, version: r.version };
  }

  /** Computed columns are declared empty, their expression kept as the field's binding; AlterTableBackfillColumns fills them. */
  async addComputedColumns(ctx: RequestContext, target: OnTable, columns: Array<{ name: string; expression: string }>) {
    const r = await this.mutate<'addColumns'>(ctx, target, 'AddColumns', { kind: 'addColumns', columns, computed: true });
    return { transaction_id: r.transaction_id, version: r.version };
  }

  async alterColumns(ctx: RequestContext, target: OnTable, alterations: ColumnAlteration[]) {
    if (!alterations.length) throw invalidInput('alterations must hold at least one change');
    const r = await this.mutate<'alterColumns'>(ctx, target, 'AlterColumns', { kind: 'alterColumns', alterations });
    return { transaction_id: r.transaction_id, version: r.version };
  }

  async dropColumns(ctx: RequestContext, target: OnTable, columns: string[]) {
    if (!columns.length) throw invalidInput('columns must name at least one column');
    const r = await this.mutate<'dropColumns'>(ctx, target, 'DropColumns', { kind: 'dropColumns', columns });
    return { transaction_id: r.transaction_id, version: r.version };
  }

  async updateFieldMetadata(ctx: RequestContext, target: OnTable, updates: FieldMetadataUpdate[]) {
    if (!updates.length) throw invalidInput('updates must hold at least one field');
    const r = await this.mutate<'updateFieldMetadata'>(ctx, target, 'UpdateFieldMetadata', { kind: 'updateFieldMetadata', updates });
    // The spec keys the resulting metadata by each updated field's path.
    return { transaction_id: r.transaction_id, version: r.version, fields: Object.fromEntries(r.fields.map((f) => [f.path, f.metadata])) };
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
