import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { CatalogError, ErrorCode, IndexType, lineLocation } from '@app/catalog';
import { DataService, IndexService } from '@app/application';
import { IndexBuildJob, QUEUES } from '@app/jobs';
import { IndexParams, buildHnsw, lanceIndexConfig } from '@app/lance';
import { TransactionJob, lockOptions, recordFailedAttempt, workerContext } from './transaction-jobs';
import { TransactionJobProcessor } from './transaction-job-processor';

/**
 * Builds one index per job, in the life every transaction's job lives (runTransactionJob): a
 * canceled or finished transaction is skipped, a crash leaves the job to BullMQ's stalled-job
 * retry, an unavailable service is waited out (runAttempt), and a refusal or the last failed
 * attempt marks the transaction Failed with the reason. A cancel while it builds leaves no index:
 * an HNSW build stops at it, a Lance build is dropped once done; so is a Lance build whose request
 * was dropped while it ran.
 */
@Processor(QUEUES.indexBuilds, lockOptions())
export class IndexBuildProcessor extends TransactionJobProcessor<IndexBuildJob> {
  protected readonly logger = new Logger('index-builds');

  constructor(
    private readonly indexes: IndexService,
    private readonly data: DataService,
  ) {
    super();
  }

  process(job: Job<IndexBuildJob>, token?: string): Promise<string> {
    return this.attempt(job, token, 'index-build', 'building the index', () => this.steps(job));
  }

  private steps(job: Job<IndexBuildJob>): TransactionJob {
    const ctx = workerContext(job.data.database);
    const { table: id, indexName, transactionId, branch } = job.data;
    // The request as the last look at the transaction found it.
    let found: IndexBuild | undefined;
    return {
      gone: 'the index request is gone',
      succeeded: 'built',
      status: async () => {
        found = await this.indexes.buildOf(ctx, id, indexName, transactionId, branch);
        return found.status;
      },
      setStatus: async (status, properties) => {
        await this.indexes.setStatus(ctx, transactionId, status, properties);
        if (status === 'Succeeded') this.logger.log(`index build succeeded: ${found!.index.indexType} '${indexName}' on ${id.join('/')} (transaction ${transactionId})`);
      },
      work: async (life): Promise<Record<string, string>> => {
        const { table, index } = found!;
        const type = index.indexType as IndexType;
        const params = index.params as IndexParams;
        this.logger.log(`index build started: ${type} '${index.name}' (transaction ${transactionId}, attempt ${job.attemptsMade + 1})`);
        const dataset = await this.data.open(ctx, table);
        try {
          if (type === 'HNSW') {
            // hnswlib's build runs in a thread that stops between points when asked, so a cancel does not wait for the build.
            const built = await buildHnsw(dataset, lineLocation(table), index.name, index.columns[0], {
              files: this.data.files,
              distanceType: params.distance_type,
              m: params.m,
              efConstruction: params.ef_construction,
              signal: life.stoppable(),
            });
            return { table_version: String(built.tableVersion), indexed_rows: String(built.indexedRows) };
          }
          const rows = params.target_partition_size ? await dataset.countRows() : 0;
          await dataset.createIndex(index.columns[0], { config: lanceIndexConfig(type, params, rows), name: index.name, replace: false });
          if (await this.requestGone(job.data)) {
            // Dropped (or requested again) while Lance built it: the index is no request's to keep,
            // and left in place it would come back after the drop and take the name from a new request.
            await dataset.dropIndex(index.name);
            throw new UnrecoverableError(`the index request is gone: '${index.name}' was dropped or requested again while it was built; the index built was dropped`);
          }
          return { table_version: String(await dataset.version()) };
        } finally {
          dataset.close();
        }
      },
      undo: async (when) => {
        if (when === 'stopped') this.logger.log(`index build stopped: transaction ${transactionId} was canceled while '${indexName}' was being built`);
        await this.tableNow(job.data)
          .then((table) => this.indexes.dropTableIndex(ctx, table, indexName, branch))
          .catch((e) => this.logger.warn(`could not drop the canceled index '${indexName}' (transaction ${transactionId}); drop it with DropTableIndex: ${(e as Error).message}`));
        return when === 'stopped' ? 'canceled during the build; the build was stopped' : 'canceled during the build; the built index was dropped';
      },
    };
  }

  /** Whether the catalog no longer holds this build's request; unsure (a service down) counts as held. */
  private async requestGone(data: IndexBuildJob): Promise<boolean> {
    const { database, indexName, transactionId, branch } = data;
    try {
      await this.indexes.buildOf(workerContext(database), await this.tableNow(data), indexName, transactionId, branch);
      return false;
    } catch (e) {
      return e instanceof CatalogError && (e.code === ErrorCode.TableIndexNotFound || e.code === ErrorCode.TransactionNotFound);
    }
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<IndexBuildJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'index build', (ctx, id, status, properties) => this.indexes.setStatus(ctx, id, status, properties));
  }
}

type IndexBuild = Awaited<ReturnType<IndexService['buildOf']>>;
