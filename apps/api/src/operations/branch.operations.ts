import { branchOf } from '@app/catalog';
import { createBranchBody, deleteBranchBody, pagedListBody } from '../http/body-schemas';
import { operation } from './operation';

/** The spec's Branch operations: a branch is a line of versions of a managed table apart from main's. */
export const BRANCH_OPERATIONS = [
  /** Paging is in the query, as for tags; a body is optional. */
  operation({
    operationId: 'ListTableBranches',
    method: 'POST',
    path: '/v1/table/:id/branches/list',
    access: 'read',
    body: pagedListBody,
    subject: 'table',
    handle: ({ ctx, table, body, http }, s) => s.branches.listTableBranches(ctx, table.id, http.pageOr(body)),
  }),
  operation({
    operationId: 'CreateTableBranch',
    method: 'POST',
    path: '/v1/table/:id/branches/create',
    access: 'write',
    body: createBranchBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => {
      const fromBranch = branchOf(body.from_branch);
      return s.branches.createTableBranch(ctx, {
        id: table.id,
        name: body.name,
        ...(fromBranch !== undefined ? { fromBranch } : {}),
        ...(body.from_version !== null && body.from_version !== undefined ? { fromVersion: body.from_version } : {}),
        createdAtMillis: Date.now(),
      });
    },
  }),
  operation({
    operationId: 'DeleteTableBranch',
    method: 'POST',
    path: '/v1/table/:id/branches/delete',
    access: 'admin',
    body: deleteBranchBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => s.branches.deleteTableBranch(ctx, table.id, body.name),
  }),
];
