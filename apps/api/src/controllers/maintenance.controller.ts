import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { MaintenanceKind, invalidInput, requireTableId } from '@app/catalog';
import { MaintenanceService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { expireVersionsBody, maintenanceBody, parseBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';
import { branchField } from '../http/branch-param';

const ID = 3;

/** Table maintenance (extensions outside the spec): each job answers 202 with its transaction, followed with DescribeTransaction. */
@Controller('v1/table')
export class MaintenanceController {
  constructor(
    private readonly rest: RestRequests,
    private readonly maintenance: MaintenanceService,
  ) {}

  @Post(':id/maintenance/compact')
  @HttpCode(202)
  compact(@Req() req: FastifyRequest) {
    return this.job(req, 'compact');
  }

  @Post(':id/maintenance/optimize_indices')
  @HttpCode(202)
  optimizeIndices(@Req() req: FastifyRequest) {
    return this.job(req, 'optimize_indices');
  }

  /** The retention is the body's, else the policy in force; with neither there is nothing to expire. */
  @Post(':id/maintenance/expire_versions')
  @HttpCode(202)
  expireVersions(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(expireVersionsBody, r.body());
    const options: Record<string, number> = {};
    if (body.older_than_seconds != null) options.older_than_seconds = body.older_than_seconds;
    if (body.keep_last != null) options.keep_last = body.keep_last;
    const id = requireTableId(r.objectId(ID, body));
    return this.maintenance.describe(r.context(body.context), id, branchField(body.branch).branch).then((state) => {
      if (!Object.keys(options).length) {
        if (state.policy.expire_older_than_seconds !== undefined) options.older_than_seconds = state.policy.expire_older_than_seconds;
        if (state.policy.expire_keep_last !== undefined) options.keep_last = state.policy.expire_keep_last;
      }
      if (!Object.keys(options).length) {
        throw invalidInput('no retention: give older_than_seconds and/or keep_last, or set maintenance.expire.older_than_seconds / maintenance.expire.keep_last on the table or a namespace above it');
      }
      return this.maintenance.request(r.context(body.context), { id, kind: 'expire_versions', options, ...branchField(body.branch) });
    });
  }

  @Post(':id/maintenance/describe')
  @HttpCode(200)
  describe(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(maintenanceBody, r.body());
    return this.maintenance.describe(r.context(body.context), requireTableId(r.objectId(ID, body)), branchField(body.branch).branch);
  }

  private job(req: FastifyRequest, kind: MaintenanceKind) {
    const r = this.rest.of(req);
    const body = parseBody(maintenanceBody, r.body());
    return this.maintenance.request(r.context(body.context), { id: requireTableId(r.objectId(ID, body)), kind, ...branchField(body.branch) });
  }
}
