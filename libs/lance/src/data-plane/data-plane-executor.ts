import * as arrow from 'apache-arrow';
import type * as lancedb from '@lancedb/lancedb';
import { CatalogError, ErrorCode, withoutTrailing } from '@app/catalog';
import { addIpcFile } from '../ipc-add';
import { withIpcFile } from '../ipc-file';
import { buildLanceQuery } from '../lance-query';
import { LanceTables } from '../lance-tables';
import { queryIpcFile } from '../query-ipc';
import { decodeArrowBody, toArrowFile } from '../arrow-ipc';
import { DataPlaneFailure, DataPlaneHooks, DataPlaneKind, DataPlaneOp, DataPlaneResult, DataPlaneTable } from './data-plane-ops';

type Op<K extends DataPlaneKind> = Extract<DataPlaneOp, { kind: K }>;

/**
 * Runs data operations on Lance tables opened through a LanceTables. A managed table's latest
 * version is served from a cached handle (LanceTables.withLatest); anything else from a handle
 * opened for the call. A failure leaves as a CatalogError when the request itself is wrong in a
 * way known before Lance runs, or as a DataPlaneFailure carrying Lance's text and its phase.
 */
export class DataPlaneExecutor {
  constructor(private readonly lance: LanceTables) {}

  run<K extends DataPlaneKind>(op: Op<K>, hooks: DataPlaneHooks = {}): Promise<DataPlaneResult<K>> {
    return (this.dispatch(op as DataPlaneOp, hooks) as Promise<DataPlaneResult<K>>).catch((e) => {
      throw e instanceof CatalogError || e instanceof DataPlaneFailure ? e : new DataPlaneFailure('work', e instanceof Error ? e.message : String(e));
    });
  }

  private dispatch(op: DataPlaneOp, hooks: DataPlaneHooks): Promise<unknown> {
    switch (op.kind) {
      case 'count':
        return this.use(op.table, 'read', (t) => t.countRows(op.predicate), op.version);
      case 'query':
        return this.use(op.table, 'read', (t) => (op.query.k === 0 ? noRows(t, op.query) : queryIpcFile(buildLanceQuery(t, op.query))), op.version);
      case 'explain':
        return this.use(op.table, 'read', (t) => explain(t, op.query, op.verbose), op.version);
      case 'analyze':
        return this.use(op.table, 'read', (t) => buildLanceQuery(t, op.query).analyzePlan(), op.version);
      case 'insert':
        return this.use(op.table, 'write', async (t, writer) => {
          if (writer !== undefined && writer !== hooks.expectedWriter) await hooks.writing?.(writer);
          if (writer !== undefined) hooks.wrote?.(writer);
          const bytes = Buffer.from(op.body.buffer, op.body.byteOffset, op.body.byteLength);
          const rows = decodeArrowBody(bytes);
          const added = await withIpcFile({ bytes, table: rows }, (file) => addIpcFile(t, file, op.mode));
          return { version: added.version };
        });
      case 'create':
        return this.lance
          .createAt(
            op.table.database,
            op.table,
            decodeArrowBody(op.body),
            op.mode,
            async (writer, write) => {
              await hooks.writing?.(writer);
              return write();
            },
            op.storageOptions,
          )
          .then((version) => ({ version }));
      case 'mergeInsert':
        return this.use(op.table, 'write', async (t) => {
          requireColumns(await t.schema(), op.options.on);
          return mergeInsert(t, decodeArrowBody(op.body), op.options);
        });
      case 'update':
        return this.use(op.table, 'write', async (t) => {
          requireColumns(await t.schema(), op.updates.map(([column]) => column));
          const r = await t.update({ valuesSql: Object.fromEntries(op.updates), ...(op.predicate ? { where: op.predicate } : {}) });
          return { version: r.version, rowsUpdated: r.rowsUpdated };
        });
      case 'delete':
        return this.use(op.table, 'write', async (t) => {
          const r = await t.delete(op.predicate);
          return { version: r.version, numDeletedRows: r.numDeletedRows };
        });
      case 'addColumns':
        return this.use(op.table, 'write', async (t) => {
          const columns = op.columns.map((c) => ({ name: c.name, valueSql: c.expression }));
          return { version: (await t.addColumns(op.computed ? { computed: columns } : columns)).version };
        });
      case 'alterColumns':
        return this.use(op.table, 'write', async (t) => {
          requireColumns(await t.schema(), op.alterations.map((a) => a.path));
          return { version: (await t.alterColumns(op.alterations)).version };
        });
      case 'dropColumns':
        return this.use(op.table, 'write', async (t) => {
          requireColumns(await t.schema(), op.columns);
          return { version: (await t.dropColumns(op.columns)).version };
        });
      case 'updateFieldMetadata':
        return this.use(op.table, 'write', async (t) => {
          requireColumns(await t.schema(), op.updates.map((u) => u.path));
          const result = await t.updateFieldMetadata(op.updates);
          // The schema after the change, read on the same open table rather than by opening it again.
          const schema = await t.schema();
          const fields = op.updates.map((u) => ({ path: u.path, metadata: Object.fromEntries(schema.fields.find((f) => f.name === u.path)?.metadata ?? []) }));
          return { version: result.version, fields };
        });
    }
  }

  /**
   * Runs `work` on the table: a managed table's latest version on this process's cached handle
   * (writes on it serialised per table, `work` told the handle's writer id), anything else on a
   * handle opened for this call.
   */
  private async use<T>(table: DataPlaneTable, access: 'read' | 'write', work: (t: lancedb.Table, writer?: string) => Promise<T>, version?: number): Promise<T> {
    if (table.managedVersioning && version === undefined) {
      let opened = false;
      return this.lance
        .withLatest(table.database, table, access, (t, writer) => {
          opened = true;
          return work(t, writer);
        })
        .catch((e) => {
          throw opened || e instanceof CatalogError ? e : new DataPlaneFailure('open', e instanceof Error ? e.message : String(e));
        });
    }
    let dataset: lancedb.Table;
    try {
      dataset = table.managedVersioning
        ? await this.lance.open(table.database, [...table.id], { version, branch: table.branch })
        : await this.lance.openAtLocation(table.location, version);
    } catch (e) {
      throw new DataPlaneFailure('open', e instanceof Error ? e.message : String(e));
    }
    try {
      return await work(dataset);
    } finally {
      dataset.close();
    }
  }

  close(): Promise<void> {
    return this.lance.close();
  }
}

async function mergeInsert(t: lancedb.Table, data: arrow.Table, o: Extract<DataPlaneOp, { kind: 'mergeInsert' }>['options']) {
  let builder = t.mergeInsert(o.on);
  if (o.whenMatchedUpdateAll) builder = builder.whenMatchedUpdateAll(o.whenMatchedUpdateAllFilter ? { where: o.whenMatchedUpdateAllFilter } : undefined);
  if (o.whenNotMatchedInsertAll) builder = builder.whenNotMatchedInsertAll();
  if (o.whenNotMatchedBySourceDelete) {
    builder = builder.whenNotMatchedBySourceDelete(o.whenNotMatchedBySourceDeleteFilter ? { where: o.whenNotMatchedBySourceDeleteFilter } : undefined);
  }
  if (o.useIndex !== undefined) builder = builder.useIndex(o.useIndex);
  const r = await builder.execute(data, o.timeoutMs ? { timeoutMs: o.timeoutMs } : {});
  return { version: r.version, numInsertedRows: r.numInsertedRows, numUpdatedRows: r.numUpdatedRows, numDeletedRows: r.numDeletedRows };
}

/**
 * The plan Lance explains. Verbose adds what the plan answers, column by column: lancedb's own
 * verbose explanation is its plain one for the plans it builds.
 */
async function explain(t: lancedb.Table, query: Op<'explain'>['query'], verbose: boolean): Promise<string> {
  const plan = await buildLanceQuery(t, query).explainPlan(verbose);
  if (!verbose) return plan;
  const schema = await buildLanceQuery(t, query).outputSchema();
  const columns = schema.fields.map((f) => `  ${f.name}: ${f.type}${f.nullable ? '' : ' not null'}`);
  // Scanned, not `/\n*$/`: the plan quotes the caller's filter, newlines and all, and that pattern is quadratic in a run of them.
  return `${withoutTrailing(plan, '\n')}\nOutput schema:\n${columns.join('\n')}\n`;
}

function requireColumns(schema: { fields: Array<{ name: string }> }, paths: string[]): void {
  const names = new Set(schema.fields.map((f) => f.name));
  const missing = paths.filter((p) => !names.has(p.split('.')[0]));
  if (missing.length) throw new CatalogError(ErrorCode.TableColumnNotFound, `column(s) ${missing.join(', ')} do not exist`);
}

/** `k: 0` (the spec's minimum): the query's columns and no rows; Lance takes no limit of 0, so one row is asked for and dropped. */
async function noRows(t: lancedb.Table, query: Op<'query'>['query']): Promise<Uint8Array> {
  const one = arrow.tableFromIPC(await queryIpcFile(buildLanceQuery(t, { ...query, k: 1 })));
  return toArrowFile(new arrow.Table(one.schema));
}
