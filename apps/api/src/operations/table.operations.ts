import { CatalogError, ErrorCode, REGISTER_TABLE_MODES, branchOf, invalidInput, parentOf, parseMode, requireTableId, validateName } from '@app/catalog';
import {
  alterColumnsBody,
  declareTableBody,
  describeTableBody,
  dropColumnsBody,
  parseBody,
  plainBody,
  registerTableBody,
  renameTableBody,
  restoreTableBody,
  statsBody,
  stringMap,
  tableExistsBody,
  updateFieldMetadataBody,
} from '../http/body-schemas';
import { RestRequest } from '../http/rest-request';
import { operation, rawOperation } from './operation';

/** Where an answer whose body is the spec's bare value names the transaction its change recorded. */
export const TRANSACTION_ID_HEADER = 'x-lance-transaction-id';

/** Also an operation of BatchCommitTables, which holds each of its operations to this entry's level. */
export const DeclareTable = operation({
  operationId: 'DeclareTable',
  method: 'POST',
  path: '/v1/table/:id/declare',
  access: 'write',
  body: declareTableBody,
  subject: 'table',
  handle: ({ ctx, table, body }, s) =>
    s.tables.declareTable(ctx, { id: table.id, location: body.location ?? undefined, properties: body.properties ?? {}, vendCredentials: body.vend_credentials ?? undefined }),
});

/** Also an operation of BatchCommitTables. */
export const DeregisterTable = operation({
  operationId: 'DeregisterTable',
  method: 'POST',
  path: '/v1/table/:id/deregister',
  access: 'admin',
  body: plainBody,
  subject: 'table',
  handle: ({ ctx, table }, s) => s.tables.deregisterTable(ctx, table.id),
});

/** The spec's Table operations on a table's catalog entry and schema (tags Table, Metadata). */
export const TABLE_OPERATIONS = [
  operation({
    operationId: 'ListAllTables',
    method: 'GET',
    path: '/v1/table',
    access: 'read',
    body: 'none',
    subject: 'none',
    handle: ({ ctx, http }, s) => s.tables.listAllTables(ctx, http.page(), http.queryBool('include_declared', true)),
  }),
  DeclareTable,
  operation({
    operationId: 'RegisterTable',
    method: 'POST',
    path: '/v1/table/:id/register',
    access: 'admin',
    body: registerTableBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) =>
      s.tables.registerTable(ctx, {
        id: table.id,
        location: body.location,
        mode: parseMode(body.mode, REGISTER_TABLE_MODES, 'mode', 'Create'),
        properties: body.properties ?? {},
      }),
  }),
  operation({
    operationId: 'DescribeTable',
    method: 'POST',
    path: '/v1/table/:id/describe',
    access: 'read',
    body: describeTableBody,
    subject: 'table',
    branch: 'body',
    handle: async ({ ctx, table, body, http }, s) => {
      let { version, branch } = { version: body.version ?? undefined, branch: table.branch };
      if (body.tag) {
        if (version !== undefined || branch !== undefined) throw invalidInput('tag cannot be used together with version or branch: a tag names its version (and branch) itself');
        // The tag resolved to the version (and branch) it points at, and that version described.
        ({ version, branch } = await s.tags.getTagVersion(ctx, table.id, body.tag));
      }
      return s.tables.describeTable(ctx, {
        ...table,
        ...(branch !== undefined ? { branch } : {}),
        version,
        withTableUri: http.queryBool('with_table_uri', body.with_table_uri ?? false),
        loadDetailedMetadata: http.queryBool('load_detailed_metadata', body.load_detailed_metadata ?? false),
        checkDeclared: http.queryBool('check_declared', body.check_declared ?? false),
        vendCredentials: body.vend_credentials ?? undefined,
      });
    },
  }),
  operation({
    operationId: 'TableExists',
    method: 'POST',
    // The spec: the status code is the answer, with no response body.
    answer: 'empty',
    path: '/v1/table/:id/exists',
    access: 'read',
    body: tableExistsBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => s.tables.tableExists(ctx, { id: table.id, version: body.version ?? undefined }),
  }),
  operation({
    operationId: 'DropTable',
    method: 'POST',
    path: '/v1/table/:id/drop',
    access: 'admin',
    body: plainBody,
    subject: 'table',
    handle: ({ ctx, table }, s) => s.tables.dropTable(ctx, table.id),
  }),
  DeregisterTable,
  operation({
    operationId: 'RenameTable',
    method: 'POST',
    path: '/v1/table/:id/rename',
    access: 'admin',
    body: renameTableBody,
    subject: 'table',
    handle: ({ ctx, table, body, http, raw }, s) => {
      const newNamespace = body.new_namespace_id ? body.new_namespace_id.map((p) => validateName(p, 'new_namespace_id part', http.delimiter)) : undefined;
      // Judged by grants, the table goes only where the caller may administer, its own namespace
      // included: a name there it may not read would otherwise answer 409 (exists) instead of 403.
      raw.callerAccess?.requireNamespace(newNamespace ?? parentOf(table.id), 3);
      return s.tables.renameTable(ctx, { id: table.id, newTableName: validateName(body.new_table_name, 'new_table_name', http.delimiter), newNamespace });
    },
  }),
  operation({
    operationId: 'RestoreTable',
    method: 'POST',
    path: '/v1/table/:id/restore',
    access: 'write',
    body: restoreTableBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.tables.restoreTable(ctx, { ...table, version: body.version }),
  }),
  operation({
    operationId: 'GetTableStats',
    method: 'POST',
    path: '/v1/table/:id/stats',
    access: 'read',
    body: statsBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table }, s) => s.mutations.stats(ctx, table),
  }),
  operation({
    operationId: 'AlterTableAlterColumns',
    method: 'POST',
    path: '/v1/table/:id/alter_columns',
    access: 'write',
    body: alterColumnsBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => {
      const virtual = body.alterations.find((a) => a.virtual_column);
      if (virtual) throw new CatalogError(ErrorCode.Unsupported, `alterations: column '${virtual.path}': virtual_column binds a UDF, which needs a UDF runtime this server does not have`);
      return s.mutations.alterColumns(
        ctx,
        table,
        body.alterations.map((a) => ({
          path: a.path,
          ...(a.rename ? { rename: a.rename } : {}),
          ...(a.nullable !== null && a.nullable !== undefined ? { nullable: a.nullable } : {}),
          ...(a.data_type ? { dataType: typeof a.data_type === 'string' ? a.data_type : a.data_type.type } : {}),
        })),
      );
    },
  }),
  operation({
    operationId: 'AlterTableDropColumns',
    method: 'POST',
    path: '/v1/table/:id/drop_columns',
    access: 'write',
    body: dropColumnsBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.mutations.dropColumns(ctx, table, body.columns),
  }),
  operation({
    operationId: 'UpdateFieldMetadata',
    method: 'POST',
    path: '/v1/table/:id/update_field_metadata',
    access: 'write',
    body: updateFieldMetadataBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) =>
      s.mutations.updateFieldMetadata(
        ctx,
        table,
        body.updates.map((u) => ({ path: u.path, metadata: u.metadata, ...(u.replace ? { replace: true } : {}) })),
      ),
  }),
  /**
   * The body is the bare string map (the spec's REST binding), not a request object: no `id` or
   * `context` is read from it, since those are keys like any other there. The context comes from
   * the `x-lance-ctx-*` headers, the branch from the query. The answer is the bare map too; the
   * change's transaction travels in the `x-lance-transaction-id` header.
   */
  rawOperation({
    operationId: 'UpdateTableSchemaMetadata',
    method: 'POST',
    path: '/v1/table/:id/schema_metadata/update',
    access: 'write',
    subject: 'table',
    serve: async (request, reply, s) => {
      const http = new RestRequest(request, s.config.defaultDatabase);
      const ctx = http.context();
      const id = requireTableId(http.pathId(3));
      // One order of checks (check-order.ts): the table named before the body.
      const metadata = await Promise.resolve()
        .then(() => parseBody(stringMap, request.body))
        .catch(async (e) => {
          await s.tables.tableExists(ctx, { id });
          throw e;
        });
      const branch = branchOf(http.queryString('branch'));
      const updated = await s.schemaMetadata.update(ctx, branch === undefined ? { id } : { id, branch }, metadata);
      void reply.header(TRANSACTION_ID_HEADER, updated.transactionId);
      return updated.metadata;
    },
  }),
];
