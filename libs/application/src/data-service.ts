import * as arrow from 'apache-arrow';
import type { Table as LanceTable } from '@lancedb/lancedb';
import {
  CatalogError,
  ErrorCode,
  ObjectId,
  Properties,
  PropertyLimits,
  TableState,
  decideRecordTableDataChanged,
  isOnlyDeclared,
  TableLine,
  requireLine,
  requireTable,
  requireVersion,
} from '@app/catalog';
import { ArrowBody, DataPlane, DataPlaneCall, DataPlaneKind, DataPlaneOp, DataPlaneResult, DataPlaneTable, LanceTables, TableQuery, manifestVersionsOnDisk, toArrowFile } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { TableFiles } from '@app/storage';
import { CatalogWriter } from './catalog-writer';
import { retryingConflicts } from './conflict-retry';
import { DataChange, DataChangeHandoff, ExpectedChange } from './data-change-handoff';
import { HnswSearch } from './hnsw-search';
import { dataPlaneError, lanceInputError } from './lance-errors';
import { RequestContext } from './request-context';
import { StoredVersions } from './stored-versions';
import { stateFor } from './request-state';


/** A query of one version of one line of a table: `branch` absent is main, `version` absent its latest. */
export type BranchQuery = TableQuery & { id: ObjectId; version?: number; branch?: string };

export type InsertMode = 'Append' | 'Overwrite';
export const INSERT_MODES: readonly InsertMode[] = ['Append', 'Overwrite'];

/** A write's version and the transaction of its TableDataChanged. */
export interface RecordedWrite {
  version: number;
  transactionId: string | undefined;
}

/**
 * The server-side data plane. Every write opens the table through this catalog (managed tables)
 * so Lance's commit arrives as `version/create`, and is recorded as a TableDataChanged event whose
 * transaction the caller gets back: in the commit's own append when the rows are known up front
 * and the commit reaches this process (see DataChangeHandoff), in an append of its own otherwise.
 */
export class DataService {
  private readonly hnsw: HnswSearch;
  private readonly handoff: DataChangeHandoff;
  /** The warehouse's files: manifests of unmanaged tables, HNSW graphs. */
  readonly files: TableFiles;
  private readonly stored?: StoredVersions;

  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly lance: LanceTables,
    /** Where Lance runs the requests' filters and bodies (see ContainedDataPlane). */
    private readonly plane: DataPlane,
    options: { files: TableFiles; hnswGraphs?: number; handoff?: DataChangeHandoff; stored?: StoredVersions },
  ) {
    this.stored = options.stored;
    this.files = options.files;
    this.hnsw = new HnswSearch(options.hnswGraphs ?? 8, options.files);
    this.handoff = options.handoff ?? new DataChangeHandoff();
  }

  /** The table on `branch` (absent: main), refusing a version that line does not have. */
  async table(ctx: RequestContext, id: ObjectId, version?: number, branch?: string): Promise<TableLine> {
    return this.checked(requireLine(requireTable(await this.view(ctx), id), branch), version);
  }

  private async view(ctx: RequestContext) {
    return stateFor(this.projections, ctx);
  }

  /** Refuses a version the table does not have. */
  private async checked<T extends TableState>(table: T, version?: number): Promise<T> {
    if (version !== undefined) {
      if (table.managedVersioning) requireVersion(table, version);
      else if (!(await manifestVersionsOnDisk(this.files, table.location)).includes(version)) {
        throw new CatalogError(ErrorCode.TableVersionNotFound, `version ${version} of the table does not exist`);
      }
    }
    return table;
  }

  async isOnlyDeclared(table: TableState): Promise<boolean> {
    if (table.managedVersioning) return isOnlyDeclared(table);
    return (await manifestVersionsOnDisk(this.files, table.location)).length === 0;
  }

  /**
   * Opens a table for reading (at a version) or writing; refuses a table that has no data yet. The
   * caller owns the handle and closes it: for long work (index builds) and pinned versions.
   */
  async open(ctx: RequestContext, table: TableLine, version?: number): Promise<LanceTable> {
    await this.refuseOnlyDeclared(table);
    return this.openFresh(ctx, table, version);
  }

  /**
   * Runs `work` on the table. The latest version of a managed table is served from this process's
   * cached handle, made current with the catalog first (see LanceTables.withLatest); `write` work on
   * it is serialised per table and told the handle's writer id. Anything else gets a handle opened
   * for this call.
   */
  async use<T>(
    ctx: RequestContext,
    table: TableLine,
    access: 'read' | 'write',
    work: (t: LanceTable, writer?: string) => Promise<T>,
    version?: number,
  ): Promise<T> {
    await this.refuseOnlyDeclared(table);
    if (table.managedVersioning && version === undefined) {
      let opened = false;
      return this.lance
        .withLatest(ctx.database, table, access, (t, writer) => {
          opened = true;
          return work(t, writer);
        })
        .catch((e) => {
          throw opened ? e : lanceInputError(e, 'opening the table failed');
        });
    }
    const dataset = await this.openFresh(ctx, table, version);
    try {
      return await work(dataset);
    } finally {
      dataset.close();
    }
  }

  private async refuseOnlyDeclared(table: TableState): Promise<void> {
    if (await this.isOnlyDeclared(table)) {
      throw new CatalogError(ErrorCode.InvalidTableState, 'the table is declared but holds no data yet; insert data first');
    }
  }

  private async openFresh(ctx: RequestContext, table: TableLine, version?: number): Promise<LanceTable> {
    try {
      return table.managedVersioning
        ? await this.lance.open(ctx.database, [...table.id], { version, branch: table.branch })
        : await this.lance.openAtLocation(table.location, version);
    } catch (e) {
      throw lanceInputError(e, 'opening the table failed');
    }
  }

  async insertIntoTable(ctx: RequestContext, req: { id: ObjectId; mode: InsertMode; data: ArrowBody; branch?: string }) {
    const table = await this.table(ctx, req.id, undefined, req.branch);
    const rows = req.data.rows;
    const operation = req.mode === 'Overwrite' ? 'Overwrite' : 'Insert';
    let written: RecordedWrite;
    if (table.branch === undefined && (await this.isOnlyDeclared(table))) {
      written = await this.writeFresh(ctx, table, req.data, 'create', operation);
    } else if (rows === 0 && req.mode !== 'Overwrite') {
      // Lance's append refuses a body without rows; appending none changes nothing and commits nothing.
      return { num_inserted_rows: 0, version: table.latestVersion ?? (await this.use(ctx, table, 'read', (t) => t.version())) };
    } else if (rows === 0 && table.branch === undefined) {
      // Overwritten with no rows: the table's content replaced by none, as a fresh write of its schema.
      written = await this.writeFresh(ctx, table, req.data, 'overwrite', operation);
    } else {
      const expected = this.handoff.expect(ctx, { tableUuid: table.uuid, operation, rows });
      const mode = req.mode === 'Overwrite' ? 'overwrite' : 'append';
      const what = 'inserting failed';
      const added = await retryingConflicts(
        what,
        () => this.write(ctx, { kind: 'insert', table: this.ref(ctx, table), mode, body: req.data.bytes }, expected, what),
        () => expected.recorded !== undefined || expected.riding,
      );
      written = await this.recorded(ctx, req.id, expected, added.version, table.branch);
    }
    return { transaction_id: written.transactionId, num_inserted_rows: rows, version: written.version };
  }

  /**
   * Writes data into a declared table, or replaces a table's content with a new schema (Overwrite),
   * and records the write as `operation`.
   */
  async writeFresh(
    ctx: RequestContext,
    table: TableState,
    data: ArrowBody,
    mode: 'create' | 'overwrite',
    operation: DataChange['operation'],
    storageOptions?: Record<string, string>,
  ): Promise<RecordedWrite> {
    const expected = this.handoff.expect(ctx, { tableUuid: table.uuid, operation, rows: data.rows });
    const op = { kind: 'create' as const, table: this.ref(ctx, table), mode, body: data.bytes, ...(storageOptions ? { storageOptions } : {}) };
    const { version } = await this.write(ctx, op, expected, 'writing the table failed');
    return this.recorded(ctx, table.id, expected, version);
  }

  /**
   * Runs a data-plane write whose commit this process expects (see DataChangeHandoff): the
   * expectation stands from the moment the writer is known until the write is over.
   */
  private async write<K extends 'insert' | 'create'>(ctx: RequestContext, op: Extract<DataPlaneOp, { kind: K }>, expected: ExpectedChange, what: string): Promise<DataPlaneResult<K>> {
    let end: (() => void) | undefined;
    try {
      return await this.plane.run(
        op,
        {
          writing: (writer) => {
            end?.();
            end = expected.begin(writer);
          },
        },
        callOf(ctx),
      );
    } catch (e) {
      throw dataPlaneError(e, what, true);
    } finally {
      end?.();
    }
  }

  /**
   * Runs a data operation on the data plane, after refusing a table that holds no data yet; its
   * failure answered in the catalog's words.
   */
  async run<K extends DataPlaneKind>(
    ctx: RequestContext,
    table: TableLine,
    op: Omit<Extract<DataPlaneOp, { kind: K }>, 'table'>,
    what: string,
    writing = false,
  ): Promise<DataPlaneResult<K>> {
    await this.refuseOnlyDeclared(table);
    const version = 'version' in op ? (op.version as number | undefined) : undefined;
    return this.plane.run({ ...op, table: this.ref(ctx, table) } as Extract<DataPlaneOp, { kind: K }>, {}, callOf(ctx)).catch(async (e) => {
      const answer = dataPlaneError(e, what, writing, version);
      if (version !== undefined && answer instanceof CatalogError && answer.code === ErrorCode.TableVersionNotFound) {
        // Files of that version are gone: its manifest with them (a client's cleanup; recorded, 404),
        // or its data alone (a broken version).
        await this.stored?.requireStored(ctx, table, version);
        throw new CatalogError(ErrorCode.InvalidTableState, `${what}: files of version ${version} of the table are missing from storage`, undefined, answer.internal);
      }
      throw answer;
    });
  }

  /** The table as the data plane is told it: which one, which line, and its latest version as this caught-up state knows it. */
  ref(ctx: RequestContext, table: TableLine): DataPlaneTable {
    return {
      database: ctx.database,
      id: table.id,
      uuid: table.uuid,
      latestVersion: table.latestVersion,
      branch: table.branch,
      branchCreatedAtMillis: table.branchCreatedAtMillis,
      managedVersioning: table.managedVersioning,
      location: table.location,
    };
  }

  /** The write's record: the one its commit carried, or one appended now when none did. */
  private async recorded(ctx: RequestContext, id: ObjectId, expected: ExpectedChange, version: number, branch?: string): Promise<RecordedWrite> {
    if (expected.recorded) return { version, transactionId: expected.recorded.transactionId };
    const { operation, rows } = expected.change;
    return { version, transactionId: await this.recordDataChange(ctx, id, operation, version, rows, branch) };
  }

  async countTableRows(ctx: RequestContext, req: { id: ObjectId; version?: number; predicate?: string; branch?: string }): Promise<number> {
    const table = await this.table(ctx, req.id, req.version, req.branch);
    if (await this.isOnlyDeclared(table)) return 0;
    return this.run<'count'>(ctx, table, { kind: 'count', version: req.version, predicate: req.predicate }, 'counting failed');
  }

  /** QueryTable: the matching rows as an Arrow IPC file (through a ready HNSW index when one fits). */
  async queryTable(ctx: RequestContext, req: BranchQuery): Promise<Uint8Array> {
    const { table, hnsw } = await this.target(ctx, req);
    if (hnsw) return toArrowFile((await this.read(ctx, table, req.version, (t) => this.hnsw.query(t, table, hnsw, req))).rows);
    return this.run<'query'>(ctx, table, { kind: 'query', version: req.version, query: tableQuery(req) }, 'the query failed');
  }

  async explainQuery(ctx: RequestContext, req: BranchQuery, verbose: boolean): Promise<string> {
    const { table, hnsw } = await this.target(ctx, req);
    if (hnsw) return this.hnsw.explain(table, hnsw, req);
    return this.run<'explain'>(ctx, table, { kind: 'explain', version: req.version, query: tableQuery(req), verbose }, 'the query failed');
  }

  /** Runs the query and reports what it did; called on a worker. */
  async analyzeQuery(ctx: RequestContext, req: BranchQuery): Promise<string> {
    const { table, hnsw } = await this.target(ctx, req);
    if (hnsw) return (await this.read(ctx, table, req.version, (t) => this.hnsw.query(t, table, hnsw, req))).plan;
    return this.run<'analyze'>(ctx, table, { kind: 'analyze', version: req.version, query: tableQuery(req) }, 'the query failed');
  }

  /** The table a query reads, from one caught-up catalog state, and the HNSW index that serves it on the latest version, if any. */
  private async target(ctx: RequestContext, req: BranchQuery) {
    const view = await this.view(ctx);
    const table = await this.checked(requireLine(requireTable(view, req.id), req.branch), req.version);
    const hnsw = req.version === undefined ? this.hnsw.indexFor(view, table, req) : undefined;
    return { table, hnsw };
  }

  private read<T>(ctx: RequestContext, table: TableLine, version: number | undefined, work: (t: LanceTable) => Promise<T>, failure = 'the query failed'): Promise<T> {
    return this.use(
      ctx,
      table,
      'read',
      (dataset) =>
        work(dataset).catch((e) => {
          throw lanceInputError(e, failure);
        }),
      version,
    );
  }

  /** Records a server-side write as an event; answers its transaction id. */
  async recordDataChange(
    ctx: RequestContext,
    id: ObjectId,
    operation: string,
    version: number,
    rows?: number,
    branch?: string,
    properties?: { set: Properties; limits: PropertyLimits },
  ): Promise<string | undefined> {
    return this.writer.execute(ctx, operation === 'Restore' ? 'RestoreTable' : `${operation}Table`, (view) => ({
      events: decideRecordTableDataChanged(view, { id, operation, version, rows, branch, properties: properties?.set, propertyLimits: properties?.limits }),
      result: (transactionId) => transactionId,
    }));
  }
}

/** The query alone, without the request's table, version and branch, for the data plane. */
function tableQuery(req: BranchQuery): TableQuery {
  const { id: _id, version: _version, branch: _branch, ...query } = req;
  return query;
}

/** Who a data operation runs for, and what ends it early: its caller leaving. */
export function callOf(ctx: RequestContext): DataPlaneCall {
  return { principal: ctx.principal ?? '', signal: ctx.departure?.() };
}
