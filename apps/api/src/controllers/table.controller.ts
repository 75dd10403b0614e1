import { Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { CatalogError, ErrorCode, REGISTER_TABLE_MODES, parseMode, requireTableId, validateName } from '@app/catalog';
import { TableService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import {
  declareTableBody,
  describeTableBody,
  parseBody,
  plainBody,
  registerTableBody,
  renameTableBody,
  restoreTableBody,
  tableExistsBody,
} from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';
import { branchField } from '../http/branch-param';

const ID = 3;

@Controller('v1/table')
export class TableController {
  constructor(
    private readonly rest: RestRequests,
    private readonly tables: TableService,
  ) {}

  @Get()
  listAll(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    return this.tables.listAllTables(r.context(), r.page(), r.queryBool('include_declared', true));
  }

  @Post(':id/declare')
  @HttpCode(200)
  declare(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(declareTableBody, r.body());
    return this.tables.declareTable(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      location: body.location ?? undefined,
      properties: body.properties ?? {},
    });
  }

  @Post(':id/register')
  @HttpCode(200)
  register(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(registerTableBody, r.body());
    return this.tables.registerTable(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      location: body.location,
      mode: parseMode(body.mode, REGISTER_TABLE_MODES, 'mode', 'Create'),
      properties: body.properties ?? {},
    });
  }

  @Post(':id/describe')
  @HttpCode(200)
  describe(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(describeTableBody, r.body());
    if (body.tag) throw new CatalogError(ErrorCode.TableTagNotFound, `tag '${body.tag}' does not exist`);
    return this.tables.describeTable(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      version: body.version ?? undefined,
      withTableUri: r.queryBool('with_table_uri', body.with_table_uri ?? false),
      loadDetailedMetadata: r.queryBool('load_detailed_metadata', body.load_detailed_metadata ?? false),
      checkDeclared: r.queryBool('check_declared', body.check_declared ?? false),
      vendCredentials: body.vend_credentials ?? undefined,
      ...branchField(body.branch),
    });
  }

  @Post(':id/exists')
  @HttpCode(200)
  exists(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(tableExistsBody, r.body());
    return this.tables.tableExists(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      version: body.version ?? undefined,
    });
  }

  @Post(':id/drop')
  @HttpCode(200)
  drop(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(plainBody, r.body());
    return this.tables.dropTable(r.context(body.context), requireTableId(r.objectId(ID, body)));
  }

  @Post(':id/deregister')
  @HttpCode(200)
  deregister(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(plainBody, r.body());
    return this.tables.deregisterTable(r.context(body.context), requireTableId(r.objectId(ID, body)));
  }

  @Post(':id/rename')
  @HttpCode(200)
  rename(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(renameTableBody, r.body());
    return this.tables.renameTable(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      newTableName: validateName(body.new_table_name, 'new_table_name', r.delimiter),
      newNamespace: body.new_namespace_id ? body.new_namespace_id.map((p) => validateName(p, 'new_namespace_id part', r.delimiter)) : undefined,
    });
  }

  @Post(':id/restore')
  @HttpCode(200)
  restore(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(restoreTableBody, r.body());
    return this.tables.restoreTable(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      version: body.version,
      ...branchField(body.branch),
    });
  }
}
