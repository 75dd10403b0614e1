import { OnWorkerEvent, Processor } from '@nestjs/bullmq';
import { Inject, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { Job } from 'bullmq';
import { IndexType, lineLocation } from '@app/catalog';
import { DataService, IndexService, RequestContext, TransactionService } from '@app/application';
import { IndexBuildJob, QUEUES } from '@app/jobs';
import { IndexParams, buildHnsw, lanceIndexConfig } from '@app/lance';
import { FINAL_STATUSES, goneUnlessUnavailable, lockOptions, recordFailedAttempt, timedJob, transactionAttempts, workerContext } from './transaction-jobs';
import { runAttempt } from './unavailable-waits';
import { JobProcessor } from './job-processor';

/** How often a running HNSW build looks for its transaction being canceled. */
const CANCEL_CHECK_MS = 1000;

/**
 * Builds one index per job. The transaction is the source of truth: a canceled or finished
 * transaction is skipped, a crash leaves the job to BullMQ's stalled-job retry, an unavailable
 * service is waited out (runAttempt), and a refusal or the last failed attempt marks the
 * transaction Failed with the reason.
 */
@Processor(QUEUES.indexBuilds, lockOptions())
export class IndexBuildProcessor extends JobProcessor implements OnModuleInit {
  private readonly logger = new Logger('index-builds');

  constructor(
    private readonly indexes: IndexService,
    private readonly data: DataService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly transactions: TransactionService,
  ) {
    super();
  }

  onModuleInit(): void {
    this.worker.concurrency = this.config.workerConcurrency;
  }

  process(job: Job<IndexBuildJob>, token?: string): Promise<string> {
    const attempts = transactionAttempts(job, 'building the index', this.config, this.transactions, this.logger);
    return timedJob(this.metrics, 'index-build', () => runAttempt(job, token, () => this.build(job), attempts));
  }

  private async build(job: Job<IndexBuildJob>): Promise<string> {
    const ctx = contextOf(job.data);
    const build = await this.indexes
      .buildOf(ctx, job.data.table, job.data.indexName, job.data.transactionId, job.data.branch)
      .catch(goneUnlessUnavailable('the index request is gone'));
    if (FINAL_STATUSES.has(build.status)) return `skipped: transaction is ${build.status}`;
    await this.indexes.setStatus(ctx, job.data.transactionId, 'Running', {
      started_at: new Date().toISOString(),
      attempt: String(job.attemptsMade + 1),
    });
    const type = build.index.indexType as IndexType;
    const params = build.index.params as IndexParams;
    this.logger.log(`index build started: ${type} '${build.index.name}' (transaction ${job.data.transactionId}, attempt ${job.attemptsMade + 1})`);
    const table = await this.data.open(ctx, build.table);
    const canceled = new AbortController();
    let detail: Record<string, string>;
    try {
      if (type === 'HNSW') {
        // hnswlib's build runs in a thread that stops between points when asked, so a cancel does not wait for the build.
        const watch = setInterval(() => {
          this.indexes
            .buildOf(ctx, job.data.table, job.data.indexName, job.data.transactionId, job.data.branch)
            .then((b) => b.status === 'Canceled' && canceled.abort(), () => undefined);
        }, CANCEL_CHECK_MS);
        try {
          const built = await buildHnsw(table, lineLocation(build.table), build.index.name, build.index.columns[0], {
            files: this.data.files,
            distanceType: params.distance_type,
            m: params.m,
            efConstruction: params.ef_construction,
            signal: canceled.signal,
          });
          detail = { table_version: String(built.tableVersion), indexed_rows: String(built.indexedRows) };
        } finally {
          clearInterval(watch);
        }
      } else {
        await table.createIndex(build.index.columns[0], { config: lanceIndexConfig(type, params), name: build.index.name, replace: false });
        detail = { table_version: String(await table.version()) };
      }
    } catch (e) {
      if (canceled.signal.aborted) {
        this.logger.log(`index build stopped: transaction ${job.data.transactionId} was canceled while '${build.index.name}' was being built`);
        return await this.dropCanceled(ctx, job.data, 'canceled during the build; the build was stopped');
      }
      throw e;
    } finally {
      table.close();
    }
    const after = await this.indexes.buildOf(ctx, job.data.table, job.data.indexName, job.data.transactionId, job.data.branch);
    if (after.status === 'Canceled') return this.dropCanceled(ctx, job.data, 'canceled during the build; the built index was dropped');
    await this.indexes.setStatus(ctx, job.data.transactionId, 'Succeeded', { ...detail, finished_at: new Date().toISOString() });
    this.logger.log(`index build succeeded: ${type} '${build.index.name}' on ${build.table.id.join('/')} (transaction ${job.data.transactionId})`);
    return 'built';
  }

  /** A canceled build leaves no index behind; answers `outcome`. */
  private async dropCanceled(ctx: RequestContext, job: IndexBuildJob, outcome: string): Promise<string> {
    await this.indexes
      .dropTableIndex(ctx, job.table, job.indexName, job.branch)
      .catch((e) => this.logger.warn(`could not drop the canceled index '${job.indexName}' (transaction ${job.transactionId}); drop it with DropTableIndex: ${(e as Error).message}`));
    return outcome;
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job<IndexBuildJob> | undefined, error: Error): Promise<void> {
    return recordFailedAttempt(job, error, this.logger, 'index build', (ctx, id, status, properties) => this.indexes.setStatus(ctx, id, status, properties));
  }
}

function contextOf(job: IndexBuildJob): RequestContext {
  return workerContext(job.database);
}
