/**
 * How to call each of the spec's 54 operations, for the loops over every operation
 * (every-operation.spec.ts, unavailable.spec.ts): its route, what its path id names, the level a
 * credential needs for it (README, *Authentication and authorization*), and a body that parses.
 */
import { arrowStream, schemaOf } from './fixtures';
import * as arrow from 'apache-arrow';

export type Level = 'read' | 'write' | 'admin';
/**
 * What the path's id names. `namespace`/`table`: an existing one; `parent`: the operation makes
 * its subject, so the namespace it goes in must exist; `transaction`; `none`: no id in the path.
 */
export type Subject = 'namespace' | 'table' | 'parent' | 'transaction' | 'none';

export interface Call {
  method: 'GET' | 'POST';
  /** The route with `{id}` (and `{index_name}`) as the spec writes it. */
  route: string;
  subject: Subject;
  level: Level;
  /** The body kind: JSON, an Arrow IPC stream, or none (GET, and POSTs the spec gives no body). */
  body: 'json' | 'arrow' | 'none';
  /** A JSON body that parses (the required fields, of the right types); for `none`, what is sent. */
  valid?: unknown;
  /** Query parameters every call of it sends. */
  query?: string;
}

const oneRow = () => arrowStream(new arrow.Table({ id: arrow.vectorFromArray(Int32Array.from([1000])) }));

export const CALLS: Record<string, Call> = {
  CreateNamespace: { method: 'POST', route: '/v1/namespace/{id}/create', subject: 'parent', level: 'admin', body: 'json', valid: {} },
  ListNamespaces: { method: 'GET', route: '/v1/namespace/{id}/list', subject: 'namespace', level: 'read', body: 'none' },
  DescribeNamespace: { method: 'POST', route: '/v1/namespace/{id}/describe', subject: 'namespace', level: 'read', body: 'json', valid: {} },
  DropNamespace: { method: 'POST', route: '/v1/namespace/{id}/drop', subject: 'namespace', level: 'admin', body: 'json', valid: {} },
  NamespaceExists: { method: 'POST', route: '/v1/namespace/{id}/exists', subject: 'namespace', level: 'read', body: 'json', valid: {} },
  ListTables: { method: 'GET', route: '/v1/namespace/{id}/table/list', subject: 'namespace', level: 'read', body: 'none' },
  ListAllTables: { method: 'GET', route: '/v1/table', subject: 'none', level: 'read', body: 'none' },
  RegisterTable: { method: 'POST', route: '/v1/table/{id}/register', subject: 'parent', level: 'admin', body: 'json', valid: { location: 'somewhere.lance' } },
  DescribeTable: { method: 'POST', route: '/v1/table/{id}/describe', subject: 'table', level: 'read', body: 'json', valid: {} },
  TableExists: { method: 'POST', route: '/v1/table/{id}/exists', subject: 'table', level: 'read', body: 'json', valid: {} },
  DropTable: { method: 'POST', route: '/v1/table/{id}/drop', subject: 'table', level: 'admin', body: 'none', valid: {} },
  DeregisterTable: { method: 'POST', route: '/v1/table/{id}/deregister', subject: 'table', level: 'admin', body: 'json', valid: {} },
  RestoreTable: { method: 'POST', route: '/v1/table/{id}/restore', subject: 'table', level: 'write', body: 'json', valid: { version: 1 } },
  RenameTable: { method: 'POST', route: '/v1/table/{id}/rename', subject: 'table', level: 'admin', body: 'json', valid: { new_table_name: 'renamed' } },
  UpdateTableSchemaMetadata: { method: 'POST', route: '/v1/table/{id}/schema_metadata/update', subject: 'table', level: 'write', body: 'json', valid: { k: 'v' } },
  ListTableVersions: { method: 'POST', route: '/v1/table/{id}/version/list', subject: 'table', level: 'read', body: 'none', valid: null },
  CreateTableVersion: { method: 'POST', route: '/v1/table/{id}/version/create', subject: 'table', level: 'write', body: 'json', valid: { version: 99, manifest_path: 'x/_versions/99.manifest-x' } },
  DescribeTableVersion: { method: 'POST', route: '/v1/table/{id}/version/describe', subject: 'table', level: 'read', body: 'json', valid: {} },
  BatchDeleteTableVersions: { method: 'POST', route: '/v1/table/{id}/version/delete', subject: 'table', level: 'admin', body: 'json', valid: { ranges: [] } },
  BatchCreateTableVersions: { method: 'POST', route: '/v1/table/version/batch-create', subject: 'none', level: 'write', body: 'json', valid: { entries: [{ id: ['g', 't'], version: 99, manifest_path: 'x' }] } },
  BatchCommitTables: { method: 'POST', route: '/v1/table/batch-commit', subject: 'none', level: 'write', body: 'json', valid: { operations: [{ declare_table: { id: ['g', 'made'] } }] } },
  AlterTableAlterColumns: { method: 'POST', route: '/v1/table/{id}/alter_columns', subject: 'table', level: 'write', body: 'json', valid: { alterations: [{ path: 'name', rename: 'label' }] } },
  UpdateFieldMetadata: { method: 'POST', route: '/v1/table/{id}/update_field_metadata', subject: 'table', level: 'write', body: 'json', valid: { updates: [{ path: 'id', metadata: { k: 'v' } }] } },
  AlterTableDropColumns: { method: 'POST', route: '/v1/table/{id}/drop_columns', subject: 'table', level: 'write', body: 'json', valid: { columns: ['name'] } },
  GetTableStats: { method: 'POST', route: '/v1/table/{id}/stats', subject: 'table', level: 'read', body: 'json', valid: {} },
  InsertIntoTable: { method: 'POST', route: '/v1/table/{id}/insert', subject: 'table', level: 'write', body: 'arrow' },
  MergeInsertIntoTable: { method: 'POST', route: '/v1/table/{id}/merge_insert', subject: 'table', level: 'write', body: 'arrow', query: 'on=id&when_not_matched_insert_all=true' },
  UpdateTable: { method: 'POST', route: '/v1/table/{id}/update', subject: 'table', level: 'write', body: 'json', valid: { updates: [['id', 'id']], predicate: 'false' } },
  DeleteFromTable: { method: 'POST', route: '/v1/table/{id}/delete', subject: 'table', level: 'write', body: 'json', valid: { predicate: 'false' } },
  QueryTable: { method: 'POST', route: '/v1/table/{id}/query', subject: 'table', level: 'read', body: 'json', valid: { k: 1, vector: [] } },
  CountTableRows: { method: 'POST', route: '/v1/table/{id}/count_rows', subject: 'table', level: 'read', body: 'json', valid: {} },
  CreateTable: { method: 'POST', route: '/v1/table/{id}/create', subject: 'parent', level: 'write', body: 'arrow' },
  ExplainTableQueryPlan: { method: 'POST', route: '/v1/table/{id}/explain_plan', subject: 'table', level: 'read', body: 'json', valid: { query: { k: 1, vector: [] } } },
  AnalyzeTableQueryPlan: { method: 'POST', route: '/v1/table/{id}/analyze_plan', subject: 'table', level: 'read', body: 'json', valid: { k: 1, vector: [] } },
  AlterTableAddColumns: { method: 'POST', route: '/v1/table/{id}/add_columns', subject: 'table', level: 'write', body: 'json', valid: { new_columns: [{ name: 'plus', expression: 'id + 1' }] } },
  AlterTableBackfillColumns: { method: 'POST', route: '/v1/table/{id}/backfill_column', subject: 'table', level: 'write', body: 'json', valid: { column: 'doubled' } },
  RefreshMaterializedView: { method: 'POST', route: '/v1/materialized_view/{id}/refresh', subject: 'table', level: 'write', body: 'json', valid: {} },
  CreateMaterializedView: {
    method: 'POST',
    route: '/v1/materialized_view/{id}/create',
    subject: 'parent',
    level: 'write',
    body: 'json',
    valid: { kind: 'query', source_query: '{"source_table":"nowhere","select":["id"]}', output_schema: schemaOf({ id: new arrow.Int32() }) },
  },
  CreateTableIndex: { method: 'POST', route: '/v1/table/{id}/create_index', subject: 'table', level: 'write', body: 'json', valid: { column: 'id', index_type: 'BTREE' } },
  CreateTableScalarIndex: { method: 'POST', route: '/v1/table/{id}/create_scalar_index', subject: 'table', level: 'write', body: 'json', valid: { column: 'id', index_type: 'BTREE' } },
  ListTableIndices: { method: 'POST', route: '/v1/table/{id}/index/list', subject: 'table', level: 'read', body: 'json', valid: {} },
  DescribeTableIndexStats: { method: 'POST', route: '/v1/table/{id}/index/{index_name}/stats', subject: 'table', level: 'read', body: 'json', valid: {} },
  DropTableIndex: { method: 'POST', route: '/v1/table/{id}/index/{index_name}/drop', subject: 'table', level: 'write', body: 'none', valid: {} },
  ListTableTags: { method: 'POST', route: '/v1/table/{id}/tags/list', subject: 'table', level: 'read', body: 'none', valid: {} },
  GetTableTagVersion: { method: 'POST', route: '/v1/table/{id}/tags/version', subject: 'table', level: 'read', body: 'json', valid: { tag: 'v1' } },
  DeclareTable: { method: 'POST', route: '/v1/table/{id}/declare', subject: 'parent', level: 'write', body: 'json', valid: {} },
  CreateTableTag: { method: 'POST', route: '/v1/table/{id}/tags/create', subject: 'table', level: 'write', body: 'json', valid: { tag: 'another', version: 1 } },
  DeleteTableTag: { method: 'POST', route: '/v1/table/{id}/tags/delete', subject: 'table', level: 'write', body: 'json', valid: { tag: 'v1' } },
  UpdateTableTag: { method: 'POST', route: '/v1/table/{id}/tags/update', subject: 'table', level: 'write', body: 'json', valid: { tag: 'v1', version: 1 } },
  ListTableBranches: { method: 'POST', route: '/v1/table/{id}/branches/list', subject: 'table', level: 'read', body: 'none', valid: {} },
  CreateTableBranch: { method: 'POST', route: '/v1/table/{id}/branches/create', subject: 'table', level: 'write', body: 'json', valid: { name: 'dev' } },
  DeleteTableBranch: { method: 'POST', route: '/v1/table/{id}/branches/delete', subject: 'table', level: 'admin', body: 'json', valid: { name: 'dev' } },
  DescribeTransaction: { method: 'POST', route: '/v1/transaction/{id}/describe', subject: 'transaction', level: 'read', body: 'json', valid: {} },
  AlterTransaction: { method: 'POST', route: '/v1/transaction/{id}/alter', subject: 'transaction', level: 'write', body: 'json', valid: { actions: [{ setPropertyAction: { key: 'note', value: 'x' } }] } },
};

/** The request of a call: its path with the id (already encoded) and index name put in, and its body. */
export interface CallOptions {
  body?: unknown;
  query?: string;
  indexName?: string;
}

export function requestOf(call: Call, id: string, opts: CallOptions = {}) {
  const path = call.route.replace('{id}', id).replace('{index_name}', opts.indexName ?? 'id_idx');
  const query = [call.query, opts.query].filter(Boolean).join('&');
  const url = query ? `${path}?${query}` : path;
  if (call.body === 'arrow') {
    return { method: call.method, url, body: opts.body instanceof Buffer ? opts.body : oneRow(), headers: { 'content-type': 'application/vnd.apache.arrow.stream' } };
  }
  if (call.method === 'GET') return { method: call.method, url, body: undefined, headers: {} as Record<string, string> };
  const body = opts.body === undefined ? call.valid : opts.body;
  return { method: call.method, url, body: JSON.stringify(body ?? {}), headers: { 'content-type': 'application/json' } };
}
