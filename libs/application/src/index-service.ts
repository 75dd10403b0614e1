import { createHash } from 'node:crypto';
import {
  CatalogError,
  CatalogEvent,
  CatalogView,
  ErrorCode,
  IndexState,
  IndexType,
  ObjectId,
  PageRequest,
  Properties,
  TransactionStatus,
  decideDropTableIndex,
  decideRequestTableIndex,
  findLine,
  indexStatusOf,
  lineLocation,
  requireLine,
  requireIndex,
  requireTable,
  takePage,
} from '@app/catalog';
import { IndexParams, checkIndexColumn, checkIndexParams, readHnswMeta, removeHnsw } from '@app/lance';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter } from './catalog-writer';
import { DataService } from './data-service';
import { IndexQueue } from './transaction-job-queue.port';
import { lanceInputError } from './lance-errors';
import { retryingConflicts } from './conflict-retry';
import { RequestContext } from './request-context';
import { queueTransactionWork } from './queued-work';
import { recordTransactionStatus } from './transaction-status';
import { stateFor } from './request-state';

interface IndexListing {
  index_name: string;
  index_uuid: string;
  columns: string[];
  status: string;
  index_type?: string;
}

/**
 * Index builds are transactions: the request is recorded (Queued) and handed to a worker; the
 * worker moves the transaction through Running to Succeeded or Failed.
 */
export class IndexService {
  constructor(
    private readonly writer: CatalogWriter,
    private readonly projections: ProjectionRegistry,
    private readonly data: DataService,
    private readonly queue: IndexQueue,
  ) {}

  async createTableIndex(
    ctx: RequestContext,
    req: { id: ObjectId; name?: string; column: string; indexType: IndexType; params: IndexParams; branch?: string },
  ) {
    checkIndexParams(req.indexType, req.params);
    const table = await this.data.table(ctx, req.id, undefined, req.branch);
    await this.data.use(ctx, table, 'read', async (dataset) => {
      checkIndexColumn(req.indexType, await dataset.schema(), req.column);
      if (req.name && (await dataset.listIndices()).some((i) => i.name === req.name)) {
        throw new CatalogError(ErrorCode.TableIndexAlreadyExists, `index '${req.name}' already exists`);
      }
    });
    const { transactionId, events } = await queueTransactionWork(this.writer, this.queue, ctx, {
      operation: 'CreateTableIndex',
      what: 'build',
      decide: (view) =>
        decideRequestTableIndex(view, {
          id: req.id,
          indexName: req.name,
          column: req.column,
          indexType: req.indexType,
          params: req.params as Record<string, unknown>,
          branch: req.branch,
        }),
      job: (id, recorded) => ({
        database: ctx.database,
        transactionId: id,
        table: [...req.id],
        indexName: indexNameOf(recorded),
        ...(req.branch !== undefined ? { branch: req.branch } : {}),
      }),
    });
    const indexName = indexNameOf(events);
    return { transaction_id: transactionId, index_name: indexName };
  }

  /**
   * Indexes the catalog is building or built, and any a client built itself, in name order. With a
   * `version`, the indexes Lance holds at that version of the line, as Lance lists them there: the
   * catalog's requests are not listed (one made after that version did not exist then, and its
   * build, if any, is in a later version), nor its own HNSW graphs, which serve the latest version
   * only; a request's transaction id stays the index's `index_uuid` where that version holds what
   * the request built.
   */
  async listTableIndices(ctx: RequestContext, req: { id: ObjectId; version?: number; page: PageRequest; branch?: string }) {
    const view = await stateFor(this.projections, ctx);
    const table = await this.data.table(ctx, req.id, req.version, req.branch);
    const listed = new Map<string, IndexListing>();
    if (req.version === undefined) {
      for (const index of table.indexes.values()) {
        listed.set(index.name, {
          index_name: index.name,
          // The build's transaction id identifies this index request for as long as it exists.
          index_uuid: index.transactionId,
          columns: index.columns,
          status: indexStatusOf(view, index),
          index_type: index.indexType,
        });
      }
    }
    const version = req.version;
    if (version !== undefined || !(await this.data.isOnlyDeclared(table))) {
      for (const built of await this.data.use(ctx, table, 'read', (dataset) => dataset.listIndices(), version)) {
        const known = version === undefined ? listed.get(built.name) : builtBy(view, table.indexes.get(built.name), version);
        listed.set(built.name, {
          index_name: built.name,
          index_uuid: known?.index_uuid ?? nameUuid(table.uuid, built.name),
          columns: built.columns,
          status: known?.status === 'canceled' ? 'canceled' : 'ready',
          index_type: known?.index_type ?? built.indexType,
        });
      }
    }
    const ordered = [...listed.values()]
      .filter((i) => req.page.pageToken === undefined || i.index_name > req.page.pageToken)
      .sort((a, b) => (a.index_name < b.index_name ? -1 : 1));
    const page = takePage(ordered, req.page.limit, (i) => i.index_name);
    return { indexes: page.items, page_token: page.pageToken };
  }

  async describeIndexStats(ctx: RequestContext, id: ObjectId, name: string, version?: number, branch?: string) {
    const table = await this.data.table(ctx, id, version, branch);
    return this.data.use(ctx, table, 'read', async (dataset) => {
      const stats = await dataset.indexStats(name).catch((e) => {
        throw lanceInputError(e, 'reading index statistics failed');
      });
      // At a version, what Lance holds there: the catalog's requests and HNSW graphs are the latest version's (see listTableIndices).
      if (!stats && version !== undefined) throw new CatalogError(ErrorCode.TableIndexNotFound, `index '${name}' does not exist at version ${version}`);
      const own = table.indexes.get(name);
      if (!stats && own?.indexType === 'HNSW') {
        const view = await stateFor(this.projections, ctx);
        const meta = indexStatusOf(view, own) === 'ready' ? await readHnswMeta(this.data.files, lineLocation(table), name) : undefined;
        const rows = await dataset.countRows();
        const indexed = meta ? Math.min(meta.rows, rows) : 0;
        return { index_type: 'HNSW', ...(meta ? { distance_type: meta.space === 'ip' ? 'dot' : meta.space } : {}), num_indexed_rows: indexed, num_unindexed_rows: rows - indexed, num_indices: meta ? 1 : 0 };
      }
      if (!stats) {
        const pending = table.indexes.get(name);
        if (!pending) throw new CatalogError(ErrorCode.TableIndexNotFound, `index '${name}' does not exist`);
        return { index_type: pending.indexType, num_indexed_rows: 0, num_unindexed_rows: await dataset.countRows(), num_indices: 0 };
      }
      return {
        index_type: stats.indexType,
        ...(stats.distanceType ? { distance_type: stats.distanceType } : {}),
        num_indexed_rows: stats.numIndexedRows,
        num_unindexed_rows: stats.numUnindexedRows,
        num_indices: stats.numIndices ?? 1,
      };
    }, version);
  }

  async dropTableIndex(ctx: RequestContext, id: ObjectId, name: string, branch?: string) {
    const table = await this.data.table(ctx, id, undefined, branch);
    let built = false;
    if (!(await this.data.isOnlyDeclared(table))) {
      // Dropping depends on nothing read but the name: a drop that lost its commit races (to a compaction, say) is made again.
      built = await retryingConflicts(
        'dropping the index failed',
        () =>
          this.data.use(ctx, table, 'write', async (dataset) => {
            try {
              const found = (await dataset.listIndices()).some((i) => i.name === name);
              if (found) await dataset.dropIndex(name);
              return found;
            } catch (e) {
              throw lanceInputError(e, 'dropping the index failed');
            }
          }),
        () => false,
      );
    }
    if (!built && !table.indexes.has(name)) throw new CatalogError(ErrorCode.TableIndexNotFound, `index '${name}' does not exist`);
    if (table.indexes.get(name)?.indexType === 'HNSW') await removeHnsw(this.data.files, lineLocation(table), name);
    return this.writer.execute(ctx, 'DropTableIndex', (view) => ({
      events: recordedIndex(view, id, name, branch) ? decideDropTableIndex(view, id, name, branch) : [],
      result: (transactionId) => ({ transaction_id: transactionId }),
    }));
  }

  /** The worker's view of a build: the index request and its transaction's status. */
  async buildOf(ctx: RequestContext, id: ObjectId, name: string, transactionId: string, branch?: string) {
    const view = await stateFor(this.projections, ctx);
    const table = requireLine(requireTable(view, id), branch);
    const index = requireIndex(view, id, name, branch);
    if (index.transactionId !== transactionId) throw new CatalogError(ErrorCode.TransactionNotFound, 'the index was requested again since');
    return { table, index, status: view.transaction(transactionId)!.status };
  }

  setStatus(ctx: RequestContext, transactionId: string, status: TransactionStatus, properties: Properties = {}) {
    return recordTransactionStatus(this.writer, ctx, transactionId, status, properties);
  }
}

/** Whether the catalog holds a request for the index on that line of the table (branches may be gone). */
function recordedIndex(view: CatalogView, id: ObjectId, name: string, branch: string | undefined): boolean {
  return !!findLine(view.table(id), branch)?.indexes.has(name);
}

function indexNameOf(events: CatalogEvent[]): string {
  return (events[0].data as { indexName: string }).indexName;
}

/**
 * The catalog's request for an index of that name when its build is what a version holds: the build
 * succeeded and committed the index at or before that version (its `table_version`).
 */
function builtBy(view: CatalogView, index: IndexState | undefined, version: number): IndexListing | undefined {
  if (!index || index.indexType === 'HNSW') return undefined;
  const transaction = view.transaction(index.transactionId);
  const builtAt = Number(transaction?.properties.table_version);
  if (transaction?.status !== 'Succeeded' || !Number.isInteger(builtAt) || builtAt > version) return undefined;
  return { index_name: index.name, index_uuid: index.transactionId, columns: index.columns, status: 'ready', index_type: index.indexType };
}

/** A stable id for an index a client built itself: derived from the table and the index name. */
function nameUuid(tableUuid: string, name: string): string {
  const h = createHash('sha256').update(`${tableUuid}/${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
