import { QueryAnalysisJob } from '@app/jobs';

/** Runs AnalyzeTableQueryPlan on a worker and waits for its answer. */
export interface QueryAnalyzer {
  ping(): Promise<void>;
  /** Resolves with the analysis, or rejects: a CatalogError for a refusal, a timeout otherwise. */
  analyze(job: QueryAnalysisJob): Promise<string>;
}
