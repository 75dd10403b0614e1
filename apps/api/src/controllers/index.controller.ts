import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { branchOf, parseIndexType, requireTableId } from '@app/catalog';
import { IndexService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { createIndexBody, indexNameBody, listIndicesBody, parseBody } from '../http/body-schemas';
import { decodeFormComponent } from '../http/form-decode';
import { RestRequests } from '../http/rest-request.factory';
import { branchField } from '../http/branch-param';

const ID = 3;
const INDEX_NAME = 5;

@Controller('v1/table')
export class IndexController {
  constructor(
    private readonly rest: RestRequests,
    private readonly indexes: IndexService,
  ) {}

  /** Answers at once with the build's transaction; a worker builds the index. */
  @Post(':id/create_index')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(createIndexBody, r.body());
    const { id: _i, context, identity: _x, branch, column, index_type, name, ...params } = body;
    return this.indexes.createTableIndex(r.context(context), {
      id: requireTableId(r.objectId(ID, body)),
      ...branchField(branch),
      name: name ?? undefined,
      column,
      indexType: parseIndexType(index_type),
      params: Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null && v !== undefined)),
    });
  }

  /** The same request and answer as create_index, as the spec defines it. */
  @Post(':id/create_scalar_index')
  @HttpCode(200)
  createScalar(@Req() req: FastifyRequest) {
    return this.create(req);
  }

  @Post(':id/index/list')
  @HttpCode(200)
  list(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(listIndicesBody, r.body());
    const page = r.page();
    return this.indexes.listTableIndices(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      ...branchField(body.branch),
      version: body.version ?? undefined,
      page: { pageToken: page.pageToken ?? body.page_token ?? undefined, limit: page.limit ?? body.limit ?? undefined },
    });
  }

  @Post(':id/index/:index_name/stats')
  @HttpCode(200)
  stats(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(indexNameBody, r.body());
    return this.indexes.describeIndexStats(
      r.context(body.context),
      requireTableId(r.objectId(ID, body)),
      indexNameOf(req),
      body.version ?? undefined,
      branchOf(body.branch),
    );
  }

  @Post(':id/index/:index_name/drop')
  @HttpCode(200)
  drop(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(indexNameBody, r.body());
    return this.indexes.dropTableIndex(r.context(body.context), requireTableId(r.objectId(ID, body)), indexNameOf(req), branchOf(body.branch ?? r.queryString('branch')));
  }
}

function indexNameOf(req: FastifyRequest): string {
  return decodeFormComponent((req.raw.url ?? '').split('?')[0].split('/')[INDEX_NAME] ?? '');
}
