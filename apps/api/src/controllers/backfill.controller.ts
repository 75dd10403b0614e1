import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CatalogError, ErrorCode, requireTableId } from '@app/catalog';
import { BackfillService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { backfillColumnBody, parseBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';
import { branchField } from '../http/branch-param';

const ID = 3;

@Controller('v1/table')
export class BackfillController {
  constructor(
    private readonly rest: RestRequests,
    private readonly backfills: BackfillService,
  ) {}

  /** Answers 202 with the job's transaction at once; a worker fills the column. */
  @Post(':id/backfill_column')
  @HttpCode(202)
  backfill(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(backfillColumnBody, r.body());
    const unsupported = (['read_version', 'cluster', 'manifest'] as const).filter((k) => body[k] !== null && body[k] !== undefined);
    if (unsupported.length) {
      throw new CatalogError(ErrorCode.Unsupported, `${unsupported.join(', ')}: a backfill here reads the table's latest version in one worker job; leave them out`);
    }
    return this.backfills.requestBackfill(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      column: body.column,
      where: body.where ?? undefined,
      ...branchField(body.branch),
    });
  }
}
