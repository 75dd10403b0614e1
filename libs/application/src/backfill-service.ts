import type { Table as LanceTable } from '@lancedb/lancedb';
import { CatalogError, ErrorCode, ObjectId, Properties, TableLine, TransactionStatus, decideRequestTableBackfill, lineLocation, requireLine } from '@app/catalog';
import { manifestStats } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { RequestContext } from './request-context';
import { queueTransactionWork, transactionWorkOf } from './queued-work';
import { BackfillQueue } from './transaction-job-queue.port';
import { recordTransactionStatus } from './transaction-status';

/** The field metadata key Lance marks a computed column with (its SQL binding sits beside it). */
const COMPUTED_COLUMN = 'computed_column';
/** The field metadata key beside it where lancedb lists the columns the expression reads (a JSON array of paths). */
const COMPUTED_COLUMN_INPUTS = 'computed_column.inputs';

/**
 * What a backfill's job keeps across its attempts (in the job's data): the input columns an attempt
 * declared nullable for Lance's refresh, so that an attempt after a worker died in between declares
 * them non-nullable again (see `fill`).
 */
export interface BackfillMemory {
  relaxed: readonly string[];
  remember(columns: readonly string[]): Promise<void>;
}

export interface BackfillResult {
  rowsFilled: number;
  /** The table's version once the backfill is done. */
  version: number;
  /** Non-nullable input columns declared nullable while Lance filled the column, then non-nullable again. */
  relaxed: string[];
  /** Of those, the ones that could not be declared non-nullable again (a writer put a null in one meanwhile). */
  leftNullable: string[];
}

/**
 * AlterTableBackfillColumns: a computed column's rows are filled by a worker. The request is
 * recorded as a Queued transaction (its id is the answer's `job_id`); the worker moves it through
 * Running to Succeeded or Failed, as index builds do, and records how many rows it filled.
 */
export class BackfillService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly data: DataService,
    private readonly queue: BackfillQueue,
  ) {}

  async requestBackfill(ctx: RequestContext, req: { id: ObjectId; column: string; where?: string; branch?: string; options?: Properties }): Promise<{ job_id: string }> {
    if (req.where !== undefined) {
      throw new CatalogError(
        ErrorCode.Unsupported,
        "a backfill's `where` cannot be honoured: the Lance library this server runs fills every row of a computed column that holds no value, with no filter",
      );
    }
    const table = await this.data.table(ctx, req.id, undefined, req.branch);
    const computed = await this.data.use(ctx, table, 'read', async (dataset) => {
      const field = (await dataset.schema()).fields.find((f) => f.name === req.column);
      return field ? field.metadata.get(COMPUTED_COLUMN) === 'true' : undefined;
    });
    const { transactionId } = await queueTransactionWork(this.writer, this.queue, ctx, {
      operation: 'AlterTableBackfillColumns',
      what: 'backfill',
      decide: (view) => decideRequestTableBackfill(view, { id: req.id, column: req.column, computed, branch: req.branch, options: req.options }),
      job: (id) => ({ database: ctx.database, transactionId: id, table: [...req.id], column: req.column, ...(req.branch !== undefined ? { branch: req.branch } : {}) }),
    });
    return { job_id: transactionId };
  }

  /** The table (on the job's branch) a backfill job works on, and where its transaction stands. */
  async jobOf(ctx: RequestContext, id: ObjectId, transactionId: string, branch?: string) {
    const work = await transactionWorkOf(this.projections, ctx, id, transactionId);
    return { ...work, table: requireLine(work.table, branch) };
  }

  /**
   * Fills the column's rows that hold no value, with Lance's refresh; answers how many and the
   * table's version after.
   *
   * lancedb's refresh (0.39) fills a fragment by reading all of its rows, deleted ones included,
   * and before evaluating the expression it sets to null the inputs of every row it does not fill
   * (deleted rows, and rows that already hold a value); it then checks that batch against the
   * table's schema, so an input column declared non-nullable fails it with "Column '<input>' is
   * declared as non-nullable but contains null values". A fragment holds such rows after a delete
   * or an update (Lance's update deletes the old rows where they were), or once rows already filled
   * are compacted with unfilled ones. In those cases the column's non-nullable inputs are declared
   * nullable for the refresh and non-nullable again right after (Lance checks that none holds a
   * null), so the refresh runs as Lance meant it to: every live row that has no value gets one,
   * deleted rows stay deleted, and no other column's values or declarations change.
   */
  async fill(ctx: RequestContext, table: TableLine, column: string, memory?: BackfillMemory): Promise<BackfillResult> {
    const dataset = await this.data.open(ctx, table);
    try {
      const relax = await this.inputsToRelax(table, dataset, column);
      const restore = [...new Set([...(memory?.relaxed ?? []), ...relax])];
      if (!restore.length) {
        const filled = await dataset.refreshColumn(column);
        return { rowsFilled: filled.rowsFilled, version: filled.version, relaxed: [], leftNullable: [] };
      }
      if (relax.length) {
        // Kept before the change, so that an attempt after this worker died puts it back.
        await memory?.remember(restore).catch(() => undefined);
        await dataset.alterColumns(relax.map((path) => ({ path, nullable: true })));
      }
      let rowsFilled: number;
      try {
        rowsFilled = (await dataset.refreshColumn(column)).rowsFilled;
      } catch (e) {
        // Best effort: the job's memory has them, for its next attempt to put back.
        await declareNonNullable(dataset, restore).catch(() => undefined);
        throw e;
      }
      const leftNullable = await declareNonNullable(dataset, restore);
      return { rowsFilled, version: await dataset.version(), relaxed: restore, leftNullable };
    } finally {
      dataset.close();
    }
  }

  /**
   * The column's non-nullable input columns when Lance's refresh would set them to null in rows it
   * does not fill (see `fill`): the table has deleted rows (or its manifest cannot be read to say),
   * or some rows of the column already hold a value. None when the inputs may all hold nulls.
   */
  private async inputsToRelax(table: TableLine, dataset: LanceTable, column: string): Promise<string[]> {
    const schema = await dataset.schema();
    const strict = inputColumns(schema, column).filter((name) => schema.fields.find((f) => f.name === name)?.nullable === false);
    if (!strict.length) return [];
    const stats = await manifestStats(this.data.files, lineLocation(table), await dataset.version()).catch(() => undefined);
    if (stats === undefined || stats.numDeletedRows > 0 || stats.numFragmentsWithDeletions > 0) return strict;
    return (await dataset.countRows(`${quoteIdentifier(column)} IS NOT NULL`)) > 0 ? strict : [];
  }

  setStatus(ctx: RequestContext, transactionId: string, status: TransactionStatus, properties: Record<string, string> = {}) {
    return recordTransactionStatus(this.writer, ctx, transactionId, status, properties);
  }
}

type Schema = Awaited<ReturnType<LanceTable['schema']>>;

/** The top-level columns a computed column's expression reads (a nested input through its root), from lancedb's binding. */
function inputColumns(schema: Schema, column: string): string[] {
  const raw = schema.fields.find((f) => f.name === column)?.metadata.get(COMPUTED_COLUMN_INPUTS);
  let inputs: unknown;
  try {
    inputs = raw === undefined ? [] : JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(inputs)) return [];
  const names = new Set(schema.fields.map((f) => f.name));
  const roots = inputs.filter((i): i is string => typeof i === 'string').map((path) => (names.has(path) ? path : path.split('.')[0]));
  return [...new Set(roots)].filter((name) => names.has(name));
}

/**
 * Declares `columns` non-nullable again where they are nullable now; answers those Lance would not
 * (one of them holds a null), which stay nullable: their data says so.
 */
async function declareNonNullable(dataset: LanceTable, columns: readonly string[]): Promise<string[]> {
  const fields = (await dataset.schema()).fields;
  const nullable = columns.filter((name) => fields.find((f) => f.name === name)?.nullable === true);
  if (!nullable.length) return [];
  try {
    await dataset.alterColumns(nullable.map((path) => ({ path, nullable: false })));
    return [];
  } catch {
    const left: string[] = [];
    for (const path of nullable) {
      await dataset.alterColumns([{ path, nullable: false }]).catch(() => left.push(path));
    }
    return left;
  }
}

/** A column name as Lance's SQL reads it: between backticks, a backtick doubled. */
function quoteIdentifier(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}
