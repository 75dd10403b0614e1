import { Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { CatalogError, ErrorCode, requireTableId } from '@app/catalog';
import { CreateTableService, TableService } from '@app/application';
import { readArrowBody } from '@app/lance';
import type { FastifyRequest } from 'fastify';
import { RestRequest } from '../http/rest-request';
import { RestRequests } from '../http/rest-request.factory';
import { inputLimits } from '../http/input-limits';

const NAME = 3;

/**
 * LanceDB Enterprise-style routes: a flat list of tables and table creation from an Arrow stream,
 * for tools that speak that API. They carry an `x-api-key`, as that API does.
 */
@Controller('v1/tables')
export class EnterpriseController {
  constructor(
    private readonly rest: RestRequests,
    private readonly tables: TableService,
    private readonly creates: CreateTableService,
  ) {}

  @Get()
  list(@Req() req: FastifyRequest) {
    const r = this.authorised(req);
    return this.tables.listAllTables(r.context(), r.page(), r.queryBool('include_declared', true));
  }

  @Post(':table_name')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.authorised(req);
    return this.creates.createTable(r.context(), {
      id: requireTableId(r.pathId(NAME)),
      mode: 'Create',
      data: readArrowBody(req.body, inputLimits().arrow),
      properties: {},
    });
  }

  private authorised(req: FastifyRequest): RestRequest {
    if (!req.principal || (req.principal.via === 'anonymous' && (typeof req.headers['x-api-key'] !== 'string' || !req.headers['x-api-key']))) {
      throw new CatalogError(ErrorCode.Unauthenticated, 'this route needs an x-api-key header');
    }
    return this.rest.of(req);
  }
}
