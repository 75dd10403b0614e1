import { CatalogView, EventMetadata, ObjectId, decideRecordTableDataChanged } from '@app/catalog';
import { Rider, eventMetadata } from './catalog-writer';
import { RequestContext } from './request-context';

/** A server-side write whose rows are known before Lance commits it. */
export interface DataChange {
  tableUuid: string;
  /** As recorded in TableDataChanged; the transaction's operation is `${operation}Table`. */
  operation: 'Insert' | 'Overwrite' | 'Create';
  rows: number;
}

/** Where a write's TableDataChanged went: the transaction its answer names and the version it wrote. */
export interface RecordedChange {
  transactionId: string;
  version: number;
}

/** One write's change, under a transaction of its own, waiting for a commit of that write to carry it. */
export class ExpectedChange {
  /** Set once a commit carried the change and their append is durable. */
  recorded?: RecordedChange;
  /** Carried by a commit whose group is not through yet: no second commit may carry it meanwhile. */
  riding = false;

  constructor(
    readonly change: DataChange,
    readonly metadata: EventMetadata,
    private readonly expected: Map<string, ExpectedChange>,
  ) {}

  /** Runs `write`, whose commits carry `writer` (none: they do not come through this catalog), expecting one of them here. */
  async during<T>(writer: string | undefined, write: () => Promise<T>): Promise<T> {
    if (writer === undefined) return write();
    const end = this.begin(writer);
    try {
      return await write();
    } finally {
      end();
    }
  }

  /**
   * Expects a commit by `writer` from now until the returned function is called (once the write
   * is over, committed or not): for a write whose writer is known only once it runs.
   */
  begin(writer: string): () => void {
    if (this.expected.has(writer)) throw new Error(`writer ${writer} is already writing`);
    this.expected.set(writer, this);
    return () => {
      if (this.expected.get(writer) === this) this.expected.delete(writer);
    };
  }
}

/**
 * Hands a server-side write's TableDataChanged to its own commit, so the commit's
 * TableVersionCreated and the change's record take one durable write instead of two.
 *
 * The write runs on a writer connection (see `WRITER_HEADER`) that nothing else commits through
 * meanwhile, so a `version/create` reaching this process with that writer's id is the write's own
 * commit; the change rides on it with its own transaction. A commit refused (a version taken, a
 * revision conflict) does not carry it away: it rides again on Lance's retry, and on one commit
 * only. If no commit carried it (the commit reached another process, as a worker's do, or the
 * table is unmanaged), the caller records the change on its own, as before; a write that fails
 * before committing leaves nothing.
 */
export class DataChangeHandoff {
  private readonly expected = new Map<string, ExpectedChange>();

  expect(ctx: RequestContext, change: DataChange): ExpectedChange {
    return new ExpectedChange(change, eventMetadata(ctx, `${change.operation}Table`), this.expected);
  }

  /** The change a commit by `writer` of version `version` of table `id` carries, if a write here expects it. */
  riderFor(view: CatalogView, writer: string | undefined, id: ObjectId, version: number, branch?: string): Rider | undefined {
    const expected = writer === undefined ? undefined : this.expected.get(writer);
    if (!expected || expected.recorded || expected.riding) return undefined;
    if (view.table(id)?.uuid !== expected.change.tableUuid) return undefined;
    expected.riding = true;
    const { operation, rows } = expected.change;
    return {
      // Stamped when it rides, so it is not older than the commit it records.
      metadata: { ...expected.metadata, occurredAt: new Date().toISOString() },
      events: decideRecordTableDataChanged(view, { id, operation, version, rows, branch }),
      settled: (appended) => {
        expected.riding = false;
        if (appended) expected.recorded = { transactionId: expected.metadata.transactionId, version };
      },
    };
  }
}
