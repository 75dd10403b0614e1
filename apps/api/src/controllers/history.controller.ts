import { Controller, Get, Req } from '@nestjs/common';
import { requireTableId } from '@app/catalog';
import { HistoryService, unavailableAs503 } from '@app/application';
import { ProjectionRegistry } from '@app/projections';
import type { FastifyRequest } from 'fastify';
import { RestRequests } from '../http/rest-request.factory';

const ID = 4;

/** Audit history: an extension outside the Lance spec, read straight from the event log. */
@Controller('v1/history')
export class HistoryController {
  constructor(
    private readonly rest: RestRequests,
    private readonly history: HistoryService,
    private readonly projections: ProjectionRegistry,
  ) {}

  /** A digest of the database's whole folded state: equal digests mean equal answers. */
  @Get('digest')
  async digest(@Req() req: FastifyRequest) {
    const ctx = this.rest.of(req).context();
    const projection = await unavailableAs503(() => this.projections.current(ctx.database));
    return { database: ctx.database, ...(await projection.digest()) };
  }

  @Get('table/:id')
  table(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    return this.history.tableHistory(r.context(), requireTableId(r.pathId(ID)), r.page());
  }

  @Get('namespace/:id')
  namespace(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    return this.history.namespaceHistory(r.context(), r.pathId(ID), r.page());
  }

  @Get('transaction/:id')
  transaction(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    return this.history.transactionHistory(r.context(), r.transactionId(ID), r.page());
  }
}
