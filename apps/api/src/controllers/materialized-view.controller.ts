import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CatalogError, ErrorCode, MAX_NAME_LENGTH, invalidInput, requireTableId } from '@app/catalog';
import { MaterializedViewService, parseViewQuery } from '@app/application';
import { checkArrowIpc } from '@app/lance';
import type { FastifyRequest } from 'fastify';
import { createMaterializedViewBody, parseBody, refreshMaterializedViewBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';
import { inputLimits } from '../http/input-limits';
import { checkSqlExpression } from '../http/sql-expression';

const ID = 3;

@Controller('v1/materialized_view')
export class MaterializedViewController {
  constructor(
    private readonly rest: RestRequests,
    private readonly views: MaterializedViewService,
  ) {}

  @Post(':id/create')
  @HttpCode(201)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(createMaterializedViewBody, r.body());
    // The view's expressions reach Lance's parser and its schema apache-arrow's: bounded first.
    checkArrowIpc(Buffer.from(body.output_schema, 'base64'), inputLimits().arrow, 'output_schema');
    if (body.kind === 'query') {
      const query = parseViewQuery(body.source_query);
      for (const [output, expression] of query.select) {
        if (output.length > MAX_NAME_LENGTH) throw invalidInput(`source_query: an output name is longer than ${MAX_NAME_LENGTH} characters`);
        checkSqlExpression(expression, `source_query: the expression of '${output}'`);
      }
      if (query.where) checkSqlExpression(query.where, 'source_query: filter');
    }
    return this.views.createMaterializedView(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      kind: body.kind,
      sourceQuery: body.source_query,
      outputSchema: body.output_schema,
      withNoData: body.with_no_data ?? true,
      autoRefresh: body.auto_refresh ?? false,
    });
  }

  /** Answers 202 with the refresh's transaction at once; a worker refreshes the view. */
  @Post(':id/refresh')
  @HttpCode(202)
  refresh(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(refreshMaterializedViewBody, r.body() ?? {});
    const unsupported = (['cluster', 'output_limit', 'manifest'] as const).filter((k) => body[k] !== null && body[k] !== undefined);
    if (unsupported.length) {
      throw new CatalogError(ErrorCode.Unsupported, `${unsupported.join(', ')}: a refresh here runs lancedb's own refresh of the whole view in one worker job; leave them out`);
    }
    return this.views.requestRefresh(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      sourceVersion: body.src_version ?? undefined,
    });
  }
}
