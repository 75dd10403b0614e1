import { createHash } from 'node:crypto';
import * as arrow from 'apache-arrow';
import * as lancedb from '@lancedb/lancedb';
import {
  CatalogError,
  ErrorCode,
  ObjectId,
  TableState,
  TransactionStatus,
  decideRecordTableDataChanged,
  decideRequestViewRefresh,
  displayId,
  invalidInput,
  requireTable,
} from '@app/catalog';
import { LanceTables } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { lanceInputError } from './lance-errors';
import { RequestContext } from './request-context';
import { queueTransactionWork, transactionWorkOf } from './queued-work';
import { ViewRefreshQueue } from './transaction-job-queue.port';
import { recordTransactionStatus } from './transaction-status';
import { stateFor } from './request-state';

/** The schema metadata key lancedb keeps a materialized view's definition under. */
const DEFINITION = 'mv.definition';

/** A query-backed view's source_query: lancedb's own definition (as `mv.definition` holds it), or its `select` shorthand. */
export interface ViewQuery {
  sourceTable: string;
  select: Array<[string, string]>;
  where?: string;
  limit?: number;
}

export interface CreateMaterializedView {
  id: ObjectId;
  kind: string;
  sourceQuery: string;
  outputSchema: string;
  withNoData: boolean;
  autoRefresh: boolean;
}

/**
 * Materialized views as lancedb 0.39 keeps them: a table whose schema metadata holds the query, so
 * a view made here is one lancedb opens and refreshes itself, and the other way round. A refresh
 * is a worker's job, followed as a transaction like an index build.
 */
export class MaterializedViewService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly data: DataService,
    private readonly lance: LanceTables,
    private readonly queue: ViewRefreshQueue,
  ) {}

  async createMaterializedView(ctx: RequestContext, req: CreateMaterializedView): Promise<{ version: number; job_id?: string }> {
    if (req.kind !== 'query') {
      throw new CatalogError(ErrorCode.Unsupported, `kind '${req.kind}': only query-backed views are built here (udtf and chunker views need a UDTF runtime)`);
    }
    if (req.autoRefresh) throw new CatalogError(ErrorCode.Unsupported, 'auto_refresh: refresh views with RefreshMaterializedView');
    if (req.id.length !== 1) {
      throw new CatalogError(ErrorCode.Unsupported, 'materialized views live in the root namespace: lancedb 0.39 defines them there only');
    }
    const query = parseViewQuery(req.sourceQuery);
    checkOutputSchema(req.outputSchema, query);
    const view = await stateFor(this.projections, ctx);
    requireSourceReadable(ctx, [query.sourceTable]);
    requireTable(view, [query.sourceTable]);
    if (view.table(req.id)) throw new CatalogError(ErrorCode.TableAlreadyExists, `table '${displayId(req.id)}' already exists`);
    const version = await this.lance
      .createMaterializedView(ctx.database, req.id[0], query.sourceTable, { select: query.select, where: query.where, limit: query.limit })
      .catch((e) => {
        throw lanceInputError(e, 'creating the materialized view failed', true);
      });
    // Lance's own commits of the view are recorded as the server's: this is the caller's record of it,
    // with its principal and context.
    await this.writer.execute(ctx, 'CreateMaterializedView', (v) => ({
      events: decideRecordTableDataChanged(v, { id: req.id, operation: 'CreateMaterializedView', version }),
      result: () => undefined,
    }));
    if (req.withNoData) return { version };
    const { job_id } = await this.requestRefresh(ctx, { id: req.id });
    return { version, job_id };
  }

  /**
   * The view's definition is its schema metadata, which any writer of the table may set: the source
   * it names is judged here, as the caller's own read of it, and the job refreshes from that
   * definition only (its digest travels with the job; see `refresh`). The worker reads the source
   * with the server's own credentials.
   */
  async requestRefresh(ctx: RequestContext, req: { id: ObjectId; sourceVersion?: number; options?: Record<string, string> }): Promise<{ job_id: string }> {
    const table = await this.data.table(ctx, req.id);
    const definition = await this.data.use(ctx, table, 'read', async (dataset) => (await dataset.schema()).metadata.get(DEFINITION));
    if (definition !== undefined) requireSourceReadable(ctx, viewSource(definition));
    const { transactionId } = await queueTransactionWork(this.writer, this.queue, ctx, {
      operation: 'RefreshMaterializedView',
      what: 'refresh',
      decide: (v) => decideRequestViewRefresh(v, { id: req.id, isView: definition !== undefined, sourceVersion: req.sourceVersion, options: req.options }),
      job: (id) => ({ database: ctx.database, transactionId: id, table: [...req.id], sourceVersion: req.sourceVersion, definition: digestOf(definition ?? '') }),
    });
    return { job_id: transactionId };
  }

  /** The view a refresh job works on and where its transaction stands. */
  jobOf(ctx: RequestContext, id: ObjectId, transactionId: string) {
    return transactionWorkOf(this.projections, ctx, id, transactionId);
  }

  /**
   * Refreshes the view from the definition judged when the refresh was requested (`definition`, its
   * digest), or not at all: lancedb's refresh reads the definition from the same handle, at the
   * version read here, so a definition written since cannot be the one it runs.
   */
  async refresh(ctx: RequestContext, table: TableState, definition: string | undefined, sourceVersion?: number) {
    const dataset = await this.data.open(ctx, table);
    try {
      const now = (await dataset.schema()).metadata.get(DEFINITION);
      if (definition === undefined || now === undefined || digestOf(now) !== definition) {
        throw new CatalogError(ErrorCode.InvalidTableState, `the definition of view '${displayId(table.id)}' changed since its refresh was requested; request the refresh again`);
      }
      return await new lancedb.MaterializedView(dataset).refresh({ sourceVersion });
    } finally {
      dataset.close();
    }
  }

  setStatus(ctx: RequestContext, transactionId: string, status: TransactionStatus, properties: Record<string, string> = {}) {
    return recordTransactionStatus(this.writer, ctx, transactionId, status, properties);
  }
}

const digestOf = (definition: string) => createHash('sha256').update(definition).digest('hex');

/** The table a stored definition reads (lancedb's `source_namespace` and `source_table`); one it cannot name refreshes nothing. */
function viewSource(definition: string): ObjectId {
  let d: { source_namespace?: unknown; source_table?: unknown };
  try {
    d = JSON.parse(definition) as typeof d;
  } catch {
    throw new CatalogError(ErrorCode.InvalidTableState, 'the view\'s stored definition (mv.definition) is not JSON');
  }
  const ns = d?.source_namespace ?? [];
  if (typeof d?.source_table !== 'string' || !Array.isArray(ns) || !ns.every((n) => typeof n === 'string')) {
    throw new CatalogError(ErrorCode.InvalidTableState, 'the view\'s stored definition (mv.definition) names no source table');
  }
  return [...(ns as string[]), d.source_table];
}

/** A caller whose grants decide what it reads may define or refresh a view only over a source it reads; one it may not answers as a missing one. */
function requireSourceReadable(ctx: RequestContext, source: ObjectId): void {
  if (ctx.sees && !ctx.sees.readsTable(source)) throw ctx.sees.hiddenTable(source);
}

/**
 * source_query is the client's: here, lancedb's own view definition as JSON (`source_table`,
 * `projections` of `{output, expression}`, `filter`, `limit`), or `select` as an object of
 * output to expression or a list of names, in place of `projections`.
 */
export function parseViewQuery(sourceQuery: string): ViewQuery {
  let q: Record<string, unknown>;
  try {
    q = JSON.parse(sourceQuery) as Record<string, unknown>;
  } catch {
    throw invalidInput('source_query must be JSON: {"source_table", "projections": [{"output", "expression"}] or "select", "filter"?, "limit"?}');
  }
  if (typeof q !== 'object' || q === null || typeof q.source_table !== 'string' || !q.source_table) {
    throw invalidInput('source_query needs `source_table`, the name of the source table in the root namespace');
  }
  const select = selectOf(q);
  if (!select.length) throw invalidInput('source_query needs `projections` (or `select`) naming at least one column');
  if (q.filter !== undefined && q.filter !== null && typeof q.filter !== 'string') throw invalidInput('source_query `filter` must be a SQL predicate');
  if (q.limit !== undefined && q.limit !== null && !(Number.isInteger(q.limit) && (q.limit as number) >= 0)) {
    throw invalidInput('source_query `limit` must be a non-negative integer');
  }
  return { sourceTable: q.source_table, select, where: (q.filter as string | null) ?? undefined, limit: (q.limit as number | null) ?? undefined };
}

function selectOf(q: Record<string, unknown>): Array<[string, string]> {
  const bad = () => invalidInput('source_query `projections` must be [{"output", "expression"}], or `select` an object of output to expression or a list of names');
  if (Array.isArray(q.projections)) {
    return q.projections.map((p: unknown) => {
      const { output, expression } = (p ?? {}) as { output?: unknown; expression?: unknown };
      if (typeof output !== 'string' || typeof expression !== 'string' || !output || !expression) throw bad();
      return [output, expression];
    });
  }
  if (Array.isArray(q.select)) return q.select.map((n: unknown) => (typeof n === 'string' && n ? [n, n] : (() => { throw bad(); })()));
  if (q.select && typeof q.select === 'object') {
    return Object.entries(q.select).map(([output, expression]) => {
      if (typeof expression !== 'string' || !expression) throw bad();
      return [output, expression];
    });
  }
  throw bad();
}

/** output_schema (a base64 Arrow IPC schema) must name the view's columns, in order. */
function checkOutputSchema(outputSchema: string, query: ViewQuery): void {
  let names: string[];
  try {
    names = arrow.tableFromIPC(Buffer.from(outputSchema, 'base64')).schema.fields.map((f) => f.name);
  } catch {
    throw invalidInput('output_schema must be a base64-encoded Arrow IPC schema');
  }
  const expected = query.select.map(([output]) => output);
  const own = names.filter((n) => !n.startsWith('__'));
  if (own.join('\u0000') !== expected.join('\u0000')) {
    throw invalidInput(`output_schema names ${JSON.stringify(own)}; the projections make ${JSON.stringify(expected)}`);
  }
}
