import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CatalogError, ErrorCode, requireTableId } from '@app/catalog';
import { MaterializedViewService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { createMaterializedViewBody, parseBody, refreshMaterializedViewBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';

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
