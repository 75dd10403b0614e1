import { CatalogError, ErrorCode, ObjectId, TableLine, TransactionStatus, decideRequestTableBackfill, requireLine } from '@app/catalog';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { RequestContext } from './request-context';
import { queueTransactionWork, transactionWorkOf } from './queued-work';
import { BackfillQueue } from './transaction-job-queue.port';
import { recordTransactionStatus } from './transaction-status';

/** The field metadata key Lance marks a computed column with (its SQL binding sits beside it). */
const COMPUTED_COLUMN = 'computed_column';

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

  async requestBackfill(ctx: RequestContext, req: { id: ObjectId; column: string; where?: string; branch?: string }): Promise<{ job_id: string }> {
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
      decide: (view) => decideRequestTableBackfill(view, { id: req.id, column: req.column, computed, branch: req.branch }),
      job: (id) => ({ database: ctx.database, transactionId: id, table: [...req.id], column: req.column, ...(req.branch !== undefined ? { branch: req.branch } : {}) }),
    });
    return { job_id: transactionId };
  }

  /** The table (on the job's branch) a backfill job works on, and where its transaction stands. */
  async jobOf(ctx: RequestContext, id: ObjectId, transactionId: string, branch?: string) {
    const work = await transactionWorkOf(this.projections, ctx, id, transactionId);
    return { ...work, table: requireLine(work.table, branch) };
  }

  /** Fills the column's rows that hold no value; answers how many and the table's version after. */
  async fill(ctx: RequestContext, table: TableLine, column: string): Promise<{ rowsFilled: number; version: number }> {
    const dataset = await this.data.open(ctx, table);
    try {
      return await dataset.refreshColumn(column);
    } finally {
      dataset.close();
    }
  }

  setStatus(ctx: RequestContext, transactionId: string, status: TransactionStatus, properties: Record<string, string> = {}) {
    return recordTransactionStatus(this.writer, ctx, transactionId, status, properties);
  }
}
