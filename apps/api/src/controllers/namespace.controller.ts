import { Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import {
  CREATE_NAMESPACE_MODES,
  DROP_NAMESPACE_BEHAVIORS,
  DROP_NAMESPACE_MODES,
  parseMode,
} from '@app/catalog';
import { NamespaceService, TableService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { createNamespaceBody, dropNamespaceBody, parseBody, plainBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';

const ID = 3;

@Controller('v1/namespace')
export class NamespaceController {
  constructor(
    private readonly rest: RestRequests,
    private readonly namespaces: NamespaceService,
    private readonly tables: TableService,
  ) {}

  @Post(':id/create')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(createNamespaceBody, r.body());
    return this.namespaces.createNamespace(r.context(body.context), {
      id: r.objectId(ID, body),
      mode: parseMode(body.mode, CREATE_NAMESPACE_MODES, 'mode', 'Create'),
      properties: body.properties ?? {},
    });
  }

  @Get(':id/list')
  list(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    return this.namespaces.listNamespaces(r.context(), r.pathId(ID), r.page());
  }

  @Post(':id/describe')
  @HttpCode(200)
  describe(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(plainBody, r.body());
    return this.namespaces.describeNamespace(r.context(body.context), r.objectId(ID, body));
  }

  @Post(':id/exists')
  @HttpCode(200)
  exists(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(plainBody, r.body());
    return this.namespaces.namespaceExists(r.context(body.context), r.objectId(ID, body));
  }

  @Post(':id/drop')
  @HttpCode(200)
  drop(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(dropNamespaceBody, r.body());
    return this.namespaces.dropNamespace(r.context(body.context), {
      id: r.objectId(ID, body),
      mode: parseMode(body.mode, DROP_NAMESPACE_MODES, 'mode', 'Fail'),
      behavior: parseMode(body.behavior, DROP_NAMESPACE_BEHAVIORS, 'behavior', 'Restrict'),
    });
  }

  @Get(':id/table/list')
  listTables(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    return this.tables.listTables(r.context(), r.pathId(ID), r.page(), r.queryBool('include_declared', true));
  }
}
