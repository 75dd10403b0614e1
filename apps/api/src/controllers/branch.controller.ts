import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { branchOf, requireTableId } from '@app/catalog';
import { BranchService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { createBranchBody, deleteBranchBody, pagedListBody, parseBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';

const ID = 3;

@Controller('v1/table')
export class BranchController {
  constructor(
    private readonly rest: RestRequests,
    private readonly branches: BranchService,
  ) {}

  /** Paging is in the query, as for tags; a body is optional. */
  @Post(':id/branches/list')
  @HttpCode(200)
  list(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(pagedListBody, r.body());
    const page = r.page();
    return this.branches.listTableBranches(r.context(body.context), requireTableId(r.objectId(ID, body)), {
      pageToken: page.pageToken ?? body.page_token ?? undefined,
      limit: page.limit ?? body.limit ?? undefined,
    });
  }

  @Post(':id/branches/create')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(createBranchBody, r.body());
    const fromBranch = branchOf(body.from_branch);
    return this.branches.createTableBranch(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      name: body.name,
      ...(fromBranch !== undefined ? { fromBranch } : {}),
      ...(body.from_version !== null && body.from_version !== undefined ? { fromVersion: body.from_version } : {}),
      createdAtMillis: Date.now(),
    });
  }

  @Post(':id/branches/delete')
  @HttpCode(200)
  delete(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(deleteBranchBody, r.body());
    return this.branches.deleteTableBranch(r.context(body.context), requireTableId(r.objectId(ID, body)), body.name);
  }
}
