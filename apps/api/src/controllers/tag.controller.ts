import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { branchOf, requireTableId } from '@app/catalog';
import { TagService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { pagedListBody, parseBody, tagBody, tagVersionBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';

const ID = 3;

@Controller('v1/table')
export class TagController {
  constructor(
    private readonly rest: RestRequests,
    private readonly tags: TagService,
  ) {}

  @Post(':id/tags/list')
  @HttpCode(200)
  list(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(pagedListBody, r.body());
    const page = r.page();
    return this.tags.listTags(r.context(body.context), requireTableId(r.objectId(ID, body)), {
      pageToken: page.pageToken ?? body.page_token ?? undefined,
      limit: page.limit ?? body.limit ?? undefined,
    });
  }

  @Post(':id/tags/version')
  @HttpCode(200)
  version(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(tagBody, r.body());
    return this.tags.getTagVersion(r.context(body.context), requireTableId(r.objectId(ID, body)), body.tag);
  }

  @Post(':id/tags/create')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(tagVersionBody, r.body());
    return this.tags.createTag(r.context(body.context), requireTableId(r.objectId(ID, body)), body.tag, body.version, branchOf(body.branch));
  }

  @Post(':id/tags/update')
  @HttpCode(200)
  update(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(tagVersionBody, r.body());
    return this.tags.updateTag(r.context(body.context), requireTableId(r.objectId(ID, body)), body.tag, body.version, branchOf(body.branch));
  }

  @Post(':id/tags/delete')
  @HttpCode(200)
  delete(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(tagBody, r.body());
    return this.tags.deleteTag(r.context(body.context), requireTableId(r.objectId(ID, body)), body.tag);
  }
}
