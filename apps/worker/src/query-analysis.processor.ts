import { Processor } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { CatalogError, ErrorCode } from '@app/catalog';
import { DataService, jobFailure } from '@app/application';
import { AppConfig } from '@app/config';
import { APP_CONFIG, Metrics } from '@app/nest-wiring';
import { JobRefusal, QUEUES, QueryAnalysisJob } from '@app/jobs';
import { TableQuery } from '@app/lance';
import { isWait, runAttempt } from './unavailable-waits';
import { JobProcessor } from './job-processor';

/**
 * Runs AnalyzeTableQueryPlan; a refusal goes back to the waiting API with its Lance code. An
 * unavailable service is waited out while the API still waits for the answer; then the API is told
 * (code 17) before it gives up.
 */
@Processor(QUEUES.queryAnalysis)
export class QueryAnalysisProcessor extends JobProcessor {
  constructor(
    private readonly data: DataService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async process(job: Job<QueryAnalysisJob>, token?: string): Promise<string> {
    const ctx = { database: job.data.database, context: { origin: 'worker' }, delimiter: '$' };
    const stop = this.metrics.jobSeconds.startTimer({ type: 'query-analysis' });
    const analyze = () =>
      this.data.analyzeQuery(ctx, { ...(job.data.query as unknown as TableQuery), id: job.data.table, version: job.data.version }).catch((e) => {
        // Lance's refusals are CatalogErrors already; anything else that is not an outage is this server's own failure.
        if (e instanceof CatalogError || jobFailure(e, 'analyzing the query').kind === 'unavailable') throw e;
        throw new CatalogError(ErrorCode.Internal, `the analysis failed: ${(e as Error).message}`);
      });
    try {
      const analysis = await runAttempt(job, token, analyze, {
        settings: this.config.jobUnavailable,
        what: 'analyzing the query',
        deadline: job.data.answerBy,
        // One attempt: the API is waiting for the answer, whatever its code.
        retryConflicts: false,
        refuse: (e) => refusal(e instanceof CatalogError ? e.code : ErrorCode.Internal, e.message),
        giveUp: (message) => refusal(ErrorCode.ServiceUnavailable, message),
      });
      stop({ outcome: 'done' });
      return analysis;
    } catch (e) {
      stop({ outcome: isWait(e) ? 'waiting' : 'failed' });
      throw e;
    }
  }
}

/** The refusal the waiting API answers with, keeping its Lance code. */
function refusal(code: number, error: string): UnrecoverableError {
  const refused: JobRefusal = { code, error };
  return new UnrecoverableError(JSON.stringify(refused));
}
