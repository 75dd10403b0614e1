import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job, UnrecoverableError } from 'bullmq';
import { CatalogError } from '@app/catalog';
import { DataService } from '@app/application';
import { Metrics } from '@app/nest-wiring';
import { JobRefusal, QUEUES, QueryAnalysisJob } from '@app/jobs';
import { TableQuery } from '@app/lance';

/** Runs AnalyzeTableQueryPlan; a refusal goes back to the waiting API with its Lance code. */
@Processor(QUEUES.queryAnalysis)
export class QueryAnalysisProcessor extends WorkerHost {
  constructor(
    private readonly data: DataService,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  async process(job: Job<QueryAnalysisJob>): Promise<string> {
    const ctx = { database: job.data.database, context: { origin: 'worker' }, delimiter: '$' };
    const stop = this.metrics.jobSeconds.startTimer({ type: 'query-analysis' });
    try {
      const analysis = await this.data.analyzeQuery(ctx, { ...(job.data.query as unknown as TableQuery), id: job.data.table, version: job.data.version });
      stop({ outcome: 'done' });
      return analysis;
    } catch (e) {
      stop({ outcome: 'failed' });
      if (e instanceof CatalogError) {
        const refusal: JobRefusal = { code: e.code, error: e.message };
        throw new UnrecoverableError(JSON.stringify(refusal));
      }
      throw e;
    }
  }
}
