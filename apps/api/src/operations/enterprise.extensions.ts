import { operation } from './operation';

/**
 * LanceDB Enterprise-style routes: a flat list of tables and table creation from an Arrow stream,
 * for tools that speak that API. They carry an `x-api-key`, as that API does.
 */
export const ENTERPRISE_EXTENSIONS = [
  operation({
    extension: 'EnterpriseListTables',
    doc: { tag: 'Enterprise', summary: 'Every table of the database, flat (LanceDB Enterprise style).' },
    method: 'GET',
    path: '/v1/tables',
    access: 'read',
    credential: 'x-api-key',
    body: 'none',
    subject: 'none',
    handle: ({ ctx, http }, s) => s.tables.listAllTables(ctx, http.page(), http.queryBool('include_declared', true)),
  }),
  operation({
    extension: 'EnterpriseCreateTable',
    doc: { tag: 'Enterprise', summary: 'Creates a table from an Arrow IPC stream (LanceDB Enterprise style).' },
    method: 'POST',
    path: '/v1/tables/:table_name',
    access: 'write',
    credential: 'x-api-key',
    body: 'arrow-stream',
    subject: 'table',
    handle: ({ ctx, table, body }, s) => s.creates.createTable(ctx, { id: table.id, mode: 'Create', data: body, properties: {} }),
  }),
];
