import { pagedListBody, tagBody, tagVersionBody } from '../http/body-schemas';
import { operation } from './operation';

/** The spec's Tag operations: tags are Lance's own, kept in the dataset's refs. */
export const TAG_OPERATIONS = [
  /** Paging is in the query, or in the body; a body is optional. */
  operation({
    operationId: 'ListTableTags',
    method: 'POST',
    path: '/v1/table/:id/tags/list',
    access: 'read',
    alsoGet: ['page_token', 'limit'],
    body: pagedListBody,
    subject: 'table',
    handle: ({ ctx, table, body, http }, s) => s.tags.listTags(ctx, table.id, http.pageOr(body)),
  }),
  operation({
    operationId: 'GetTableTagVersion',
    method: 'POST',
    path: '/v1/table/:id/tags/version',
    access: 'read',
    body: tagBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => s.tags.getTagVersion(ctx, table.id, body.tag),
  }),
  operation({
    operationId: 'CreateTableTag',
    method: 'POST',
    path: '/v1/table/:id/tags/create',
    access: 'write',
    body: tagVersionBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.tags.createTag(ctx, table.id, body.tag, body.version, table.branch),
  }),
  operation({
    operationId: 'UpdateTableTag',
    method: 'POST',
    path: '/v1/table/:id/tags/update',
    access: 'write',
    body: tagVersionBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.tags.updateTag(ctx, table.id, body.tag, body.version, table.branch),
  }),
  operation({
    operationId: 'DeleteTableTag',
    method: 'POST',
    path: '/v1/table/:id/tags/delete',
    access: 'write',
    body: tagBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => s.tags.deleteTag(ctx, table.id, body.tag),
  }),
];
