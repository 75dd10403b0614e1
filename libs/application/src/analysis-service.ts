import { CatalogError, ErrorCode, ObjectId } from '@app/catalog';
import { TableQuery } from '@app/lance';
import { DataService } from './data-service';
import { QueryAnalyzer } from './query-analyzer.port';
import { RequestContext } from './request-context';

/** AnalyzeTableQueryPlan: checked here, run on a worker, answered as the plan's text. */
export class AnalysisService {
  constructor(
    private readonly data: DataService,
    private readonly analyzer: QueryAnalyzer,
  ) {}

  async analyze(ctx: RequestContext, req: TableQuery & { id: ObjectId; version?: number }): Promise<string> {
    const table = await this.data.table(ctx, req.id, req.version);
    await this.data.use(ctx, table, 'read', async () => undefined, req.version);
    await this.analyzer.ping().catch(() => {
      throw new CatalogError(ErrorCode.ServiceUnavailable, 'the analysis queue is unavailable; retry later');
    });
    const { id, version, ...query } = req;
    return this.analyzer.analyze({ database: ctx.database, table: [...id], version, query: query as Record<string, unknown> });
  }
}
