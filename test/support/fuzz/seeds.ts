import * as arrow from 'apache-arrow';

/** What the fixtures made that a valid request names. */
export interface Fixture {
  /** A transaction of the main table (its index build). */
  transactionId: string;
  /** The main table's location, for RegisterTable. */
  location: string;
}

/** Where a generated SQL expression goes in a copy of a seed's body or query. */
export interface SqlSlot {
  kind: 'predicate' | 'value';
  what: string;
  put(json: any, query: Record<string, string>, expression: string): void;
}

/** A valid request of one operation, the start of every mutation of it. */
export interface Seed {
  /** `{id}` or `{table_name}`, form-urlencoded. */
  id?: string;
  indexName?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  json?: unknown;
  /** The body is an Arrow IPC stream. */
  arrow?: boolean;
  /** A JSON field holding a base64 Arrow IPC stream. */
  arrowField?: string;
  sql?: SqlSlot[];
}

/** The fixtures' ids: the main table takes reads and row writes; the scratch table takes what removes or reshapes a table. */
export const FIXTURE = {
  namespace: 'fz',
  emptyNamespace: 'fz$empty',
  table: 'fz$t',
  scratch: 'fz$s',
  rootSource: 'fzsrc',
  view: 'fzview',
  index: 'id_idx',
  scratchIndex: 'cat_idx',
  /** The scratch table's computed column, for AlterTableBackfillColumns. */
  computed: 'twice',
  tag: 'v1',
  otherDatabase: 'fzother',
  otherTable: 'sec$t',
};

const enc = (id: string) => encodeURIComponent(id);
const VECTOR = [1, 2, 3, 4, 5, 6, 7, 8];
const T = enc(FIXTURE.table);
const S = enc(FIXTURE.scratch);

const predicate = (field: string): SqlSlot => ({ kind: 'predicate', what: field, put: (json, _q, e) => (json[field] = e) });
const queryFilter = (where: (json: any) => any): SqlSlot => ({ kind: 'predicate', what: 'filter', put: (json, _q, e) => (where(json).filter = e) });

/** An Arrow IPC stream holding only a schema with these float columns, base64 as `output_schema` wants it. */
export function schemaBase64(names: string[]): string {
  const t = arrow.tableFromArrays(Object.fromEntries(names.map((n) => [n, new Float64Array(0)])));
  return Buffer.from(arrow.tableToIPC(t, 'stream')).toString('base64');
}

/** A valid request for every operation this server serves, by `METHOD template` as /openapi.json lists it. */
export function seeds(fx: Fixture): Record<string, Seed> {
  const query = { vector: VECTOR, k: 5, filter: 'id > 3', columns: { column_names: ['id', 'text'] }, with_row_id: true };
  return {
    'GET /healthz': {},
    'GET /readyz': {},
    'GET /metrics': {},
    'GET /openapi.json': {},
    'GET /v1/history/digest': {},
    'GET /v1/history/database': { query: { limit: '5' } },
    'GET /v1/whoami': {},
    'POST /v1/grants/create': { json: { grantee: { role: 'fuzz' }, securable: { namespace: ['fz'] }, level: 'read' } },
    'POST /v1/grants/revoke': { json: { grantee: { role: 'fuzz' }, securable: { table: ['fz', 't'] }, level: 'write' } },
    'GET /v1/grants': { query: { namespace: FIXTURE.namespace, limit: '5' } },
    'POST /v1/grants/check': { json: { principal: 'fuzz', roles: ['fuzz'], table: ['fz', 't'] } },
    'POST /v1/subscriptions/create': { json: { url: 'https://hooks.example.com/in', event_types: ['TableVersionCreated'], namespace: ['fz'], from_revision: 0 } },
    'POST /v1/subscriptions/list': { json: {}, query: { limit: '5' } },
    'POST /v1/subscriptions/describe': { json: { subscription_id: '00000000-0000-4000-8000-000000000000' } },
    'POST /v1/subscriptions/delete': { json: { subscription_id: '00000000-0000-4000-8000-000000000000' } },
    'POST /v1/table/{id}/maintenance/compact': { id: S, json: {} },
    'POST /v1/table/{id}/maintenance/optimize_indices': { id: S, json: {} },
    'POST /v1/table/{id}/maintenance/expire_versions': { id: S, json: { keep_last: 2 } },
    'POST /v1/table/{id}/maintenance/describe': { id: T, json: {} },
    'GET /v1/history/namespace/{id}': { id: FIXTURE.namespace, query: { limit: '5' } },
    'GET /v1/history/table/{id}': { id: T, query: { limit: '5' } },
    'GET /v1/history/transaction/{id}': { id: fx.transactionId },
    'POST /v1/materialized_view/{id}/create': {
      id: 'fzmv',
      json: {
        kind: 'query',
        source_query: JSON.stringify({ source_table: FIXTURE.rootSource, select: { id: 'id', y: 'id * 2' }, filter: 'id < 5' }),
        output_schema: schemaBase64(['id', 'y']),
        with_no_data: true,
      },
      arrowField: 'output_schema',
      sql: [
        {
          kind: 'predicate',
          what: 'source_query.filter',
          put: (json, _q, e) => (json.source_query = JSON.stringify({ ...JSON.parse(json.source_query), filter: e })),
        },
        {
          kind: 'value',
          what: 'source_query.select.y',
          put: (json, _q, e) => (json.source_query = JSON.stringify({ ...JSON.parse(json.source_query), select: { id: 'id', y: e } })),
        },
      ],
    },
    'POST /v1/materialized_view/{id}/refresh': { id: FIXTURE.view, json: {} },
    'POST /v1/namespace/{id}/create': { id: enc('fz$new'), json: { mode: 'create', properties: { owner: 'fuzz' } } },
    'POST /v1/namespace/{id}/describe': { id: FIXTURE.namespace, json: {} },
    'POST /v1/namespace/{id}/drop': { id: enc(FIXTURE.emptyNamespace), json: { mode: 'fail', behavior: 'restrict' } },
    'POST /v1/namespace/{id}/exists': { id: FIXTURE.namespace, json: {} },
    'GET /v1/namespace/{id}/list': { id: '%24', query: { limit: '10' } },
    'GET /v1/namespace/{id}/table/list': { id: FIXTURE.namespace, query: { limit: '10', include_declared: 'true' } },
    'GET /v1/table': { query: { limit: '10' } },
    'POST /v1/table/{id}/add_columns': {
      id: S,
      json: { new_columns: [{ name: 'plus1', expression: 'id + 1' }] },
      sql: [
        { kind: 'value', what: 'new_columns[0].expression', put: (json, _q, e) => (json.new_columns[0].expression = e) },
        { kind: 'value', what: 'new_columns[0].computed', put: (json, _q, e) => (json.new_columns = [{ name: 'computed', computed: e }]) },
      ],
    },
    'POST /v1/table/{id}/alter_columns': { id: S, json: { alterations: [{ path: 'category', rename: 'kind' }] } },
    'POST /v1/table/{id}/analyze_plan': { id: T, json: { ...query }, sql: [queryFilter((j) => j)] },
    'POST /v1/table/{id}/backfill_column': { id: S, json: { column: 'twice' }, sql: [predicate('where')] },
    'POST /v1/table/{id}/branches/create': { id: T, json: { name: 'dev', from_version: 1 } },
    'POST /v1/table/{id}/branches/delete': { id: T, json: { name: 'dev' } },
    'POST /v1/table/{id}/branches/list': { id: T },
    'POST /v1/table/{id}/count_rows': { id: T, json: { predicate: 'id > 3' }, sql: [predicate('predicate')] },
    'POST /v1/table/{id}/create': {
      id: enc('fz$c'),
      arrow: true,
      query: { mode: 'create' },
      headers: { 'x-lance-table-properties': JSON.stringify({ owner: 'fuzz' }) },
    },
    'POST /v1/table/{id}/create_index': { id: T, json: { column: 'category', index_type: 'BITMAP', name: 'category_idx' } },
    'POST /v1/table/{id}/create_scalar_index': { id: T, json: { column: 'text', index_type: 'FTS', name: 'text_idx', with_position: true } },
    'POST /v1/table/{id}/declare': { id: enc('fz$d'), json: { properties: { owner: 'fuzz' } } },
    'POST /v1/table/{id}/delete': { id: T, json: { predicate: 'id > 1000' }, sql: [predicate('predicate')] },
    'POST /v1/table/{id}/deregister': { id: S, json: {} },
    'POST /v1/table/{id}/describe': { id: T, json: { version: 1, load_detailed_metadata: true }, query: { with_table_uri: 'true' } },
    'POST /v1/table/{id}/drop': { id: S },
    'POST /v1/table/{id}/drop_columns': { id: S, json: { columns: ['category'] } },
    'POST /v1/table/{id}/exists': { id: T, json: {} },
    'POST /v1/table/{id}/explain_plan': { id: T, json: { query: { ...query }, verbose: true }, sql: [queryFilter((j) => j.query)] },
    'POST /v1/table/{id}/index/{index_name}/drop': { id: S, indexName: FIXTURE.scratchIndex },
    'POST /v1/table/{id}/index/{index_name}/stats': { id: T, indexName: FIXTURE.index, json: {} },
    'POST /v1/table/{id}/index/list': { id: T, json: { limit: 10 } },
    'POST /v1/table/{id}/insert': { id: T, arrow: true, query: { mode: 'append' } },
    'POST /v1/table/{id}/merge_insert': {
      id: T,
      arrow: true,
      query: { on: 'id', when_matched_update_all: 'true', when_not_matched_insert_all: 'true', when_matched_update_all_filt: 'target.id > 1' },
      sql: [{ kind: 'predicate', what: 'when_matched_update_all_filt', put: (_j, q, e) => (q.when_matched_update_all_filt = e) }],
    },
    'POST /v1/table/{id}/query': { id: T, json: { ...query }, sql: [queryFilter((j) => j)] },
    'POST /v1/table/{id}/register': { id: enc('fz$r'), json: { location: fx.location, mode: 'create' } },
    'POST /v1/table/{id}/rename': { id: S, json: { new_table_name: 's2', new_namespace_id: [FIXTURE.namespace] } },
    'POST /v1/table/{id}/restore': { id: S, json: { version: 1 } },
    'POST /v1/table/{id}/schema_metadata/update': { id: S, json: { owner: 'fuzz' } },
    'POST /v1/table/{id}/stats': { id: T, json: {} },
    'POST /v1/table/{id}/tags/create': { id: T, json: { tag: 'second', version: 1 } },
    'POST /v1/table/{id}/tags/delete': { id: T, json: { tag: 'second' } },
    'POST /v1/table/{id}/tags/list': { id: T, query: { limit: '5' } },
    'POST /v1/table/{id}/tags/update': { id: T, json: { tag: FIXTURE.tag, version: 1 } },
    'POST /v1/table/{id}/tags/version': { id: T, json: { tag: FIXTURE.tag } },
    'POST /v1/table/{id}/update': {
      id: T,
      json: { predicate: 'id = 3', updates: [['text', "'three'"]] },
      sql: [predicate('predicate'), { kind: 'value', what: 'updates[0][1]', put: (json, _q, e) => (json.updates = [['text', e]]) }],
    },
    'POST /v1/table/{id}/update_field_metadata': { id: S, json: { updates: [{ path: 'text', metadata: { unit: 'words' } }] } },
    'POST /v1/table/{id}/version/create': { id: T, json: { version: 999, manifest_path: `${fx.location}/_versions/999.manifest`, naming_scheme: 'V2' } },
    'POST /v1/table/{id}/version/delete': { id: S, json: { ranges: [{ start_version: 1, end_version: 1 }] } },
    'POST /v1/table/{id}/version/describe': { id: T, json: { version: 1 } },
    'POST /v1/table/{id}/version/list': { id: T, query: { limit: '5', descending: 'true' }, json: null },
    'POST /v1/table/batch-commit': { json: { operations: [{ declare_table: { id: [FIXTURE.namespace, 'bc'] } }] } },
    'POST /v1/table/version/batch-create': {
      json: { entries: [{ id: [FIXTURE.namespace, 't'], version: 999, manifest_path: `${fx.location}/_versions/999.manifest` }] },
    },
    'GET /v1/tables': { headers: { 'x-api-key': 'fuzz' }, query: { limit: '10' } },
    'POST /v1/tables/{table_name}': { id: enc('fz$e'), arrow: true, headers: { 'x-api-key': 'fuzz' } },
    'POST /v1/transaction/{id}/alter': { id: fx.transactionId, json: { actions: [{ setPropertyAction: { key: 'note', value: 'fuzz' } }] } },
    'POST /v1/transaction/{id}/describe': { id: fx.transactionId, json: {} },
  };
}

/** Query parameters some route reads, for the query-string mutations of every route. */
export const QUERY_NAMES = [
  'delimiter', 'mode', 'limit', 'page_token', 'descending', 'branch', 'on', 'when_matched_update_all', 'when_matched_update_all_filt',
  'when_not_matched_insert_all', 'when_not_matched_by_source_delete', 'when_not_matched_by_source_delete_filt', 'timeout', 'use_index',
  'include_declared', 'with_table_uri', 'load_detailed_metadata', 'check_declared', 'properties',
];
