import { parseDuration } from '../http/duration';
import { CatalogError, ErrorCode, MAX_NAME_LENGTH, invalidInput, parseMode, propertyMapProblem } from '@app/catalog';
import { CREATE_TABLE_MODES, INSERT_MODES } from '@app/application';
import {
  addColumnsBody,
  checkedParse,
  backfillColumnBody,
  countRowsBody,
  deleteBody,
  explainPlanBody,
  queryTableBody,
  stringMap,
  updateBody,
} from '../http/body-schemas';
import { inputLimits } from '../http/input-limits';
import { RestRequest } from '../http/rest-request';
import { checkSqlExpression } from '../http/sql-expression';
import { operation } from './operation';

/** The most columns a merge key may name. */
const MAX_MERGE_KEY_COLUMNS = 64;

/** The spec's Data operations on a table (tags Table, Data): rows in and out, plans, columns filled by expressions. */
export const DATA_OPERATIONS = [
  operation({
    operationId: 'InsertIntoTable',
    method: 'POST',
    path: '/v1/table/:id/insert',
    access: 'write',
    body: 'arrow-stream',
    subject: 'table',
    branch: 'query',
    handle: ({ ctx, table, body, http }, s) =>
      s.data.insertIntoTable(ctx, { ...table, mode: parseMode(http.queryString('mode'), INSERT_MODES, 'mode', 'Append'), data: body }),
  }),
  operation({
    operationId: 'CreateTable',
    method: 'POST',
    path: '/v1/table/:id/create',
    access: 'write',
    body: 'arrow-stream',
    subject: 'table',
    handle: ({ ctx, table, body, http, raw }, s) => {
      const location = raw.headers['x-lance-table-location'];
      return s.creates.createTable(ctx, {
        id: table.id,
        mode: parseMode(http.queryString('mode'), CREATE_TABLE_MODES, 'mode', 'Create'),
        data: body,
        location: typeof location === 'string' && location ? location : undefined,
        properties: withinLimits(
          { ...jsonMap(http.queryString('properties'), 'properties'), ...jsonMap(headerOf(raw.headers, 'x-lance-table-properties'), 'x-lance-table-properties') },
          'properties',
        ),
        storageOptions: writeOptions(jsonMap(http.queryString('storage_options'), 'storage_options')),
      });
    },
  }),
  /** The body is the Arrow stream; the matching options are query parameters. */
  operation({
    operationId: 'MergeInsertIntoTable',
    method: 'POST',
    path: '/v1/table/:id/merge_insert',
    access: 'write',
    body: 'arrow-stream',
    subject: 'table',
    branch: 'query',
    handle: ({ ctx, table, body, http }, s) => {
      // A composite key comes comma-separated, or (Lance's REST namespace client) as `on` repeated.
      const on = http.queryStrings('on').flatMap((v) => v.split(',')).map((c) => c.trim()).filter(Boolean);
      if (on.some((c) => c.length > MAX_NAME_LENGTH)) throw invalidInput(`on: a column name is longer than ${MAX_NAME_LENGTH} characters`);
      if (on.length > MAX_MERGE_KEY_COLUMNS) throw invalidInput(`on: at most ${MAX_MERGE_KEY_COLUMNS} key columns`);
      return s.mutations.mergeInsert(ctx, table, body, {
        on,
        whenMatchedUpdateAll: http.queryBool('when_matched_update_all', false),
        whenMatchedUpdateAllFilter: filterParam(http, 'when_matched_update_all_filt'),
        whenNotMatchedInsertAll: http.queryBool('when_not_matched_insert_all', false),
        whenNotMatchedBySourceDelete: http.queryBool('when_not_matched_by_source_delete', false),
        whenNotMatchedBySourceDeleteFilter: filterParam(http, 'when_not_matched_by_source_delete_filt'),
        timeoutMs: parseDuration(http.queryString('timeout'), 'timeout'),
        useIndex: http.queryString('use_index') === undefined ? undefined : http.queryBool('use_index', true),
      });
    },
  }),
  operation({
    operationId: 'UpdateTable',
    method: 'POST',
    path: '/v1/table/:id/update',
    access: 'write',
    body: updateBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) =>
      s.mutations.update(ctx, table, body.predicate ?? undefined, body.updates as Array<[string, string]>, body.properties ? { set: body.properties, limits: inputLimits().properties } : undefined),
  }),
  operation({
    operationId: 'DeleteFromTable',
    method: 'POST',
    path: '/v1/table/:id/delete',
    access: 'write',
    body: deleteBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.mutations.delete(ctx, table, body.predicate),
  }),
  operation({
    operationId: 'QueryTable',
    method: 'POST',
    path: '/v1/table/:id/query',
    access: 'read',
    answer: 'arrow-file',
    body: queryTableBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => {
      const { id: _id, context: _context, identity: _identity, branch: _branch, version, ...query } = body;
      return s.data.queryTable(ctx, { ...withoutNulls(query), ...table, version: version ?? undefined });
    },
  }),
  operation({
    operationId: 'CountTableRows',
    method: 'POST',
    path: '/v1/table/:id/count_rows',
    access: 'read',
    alsoGet: [],
    answer: 'number',
    body: countRowsBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.data.countTableRows(ctx, { ...table, version: body.version ?? undefined, predicate: body.predicate ?? undefined }),
  }),
  operation({
    operationId: 'ExplainTableQueryPlan',
    method: 'POST',
    path: '/v1/table/:id/explain_plan',
    access: 'read',
    answer: 'string',
    body: explainPlanBody,
    subject: 'table',
    branch: (body) => body.branch ?? body.query.branch,
    handle: ({ ctx, table, body }, s) => {
      const { id: _i, context: _c, identity: _x, branch: _b, version, ...query } = body.query;
      return s.data.explainQuery(ctx, { ...withoutNulls(query), ...table, version: version ?? undefined }, body.verbose ?? false);
    },
  }),
  /** Runs on a worker; 503 code 17 when none answers in time. */
  operation({
    operationId: 'AnalyzeTableQueryPlan',
    method: 'POST',
    path: '/v1/table/:id/analyze_plan',
    access: 'read',
    answer: 'string',
    body: queryTableBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => {
      const { id: _i, context: _c, identity: _x, branch: _b, version, ...query } = body;
      return s.analysis.analyze(ctx, { ...withoutNulls(query), ...table, version: version ?? undefined });
    },
  }),
  operation({
    operationId: 'AlterTableAddColumns',
    method: 'POST',
    path: '/v1/table/:id/add_columns',
    access: 'write',
    body: addColumnsBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => {
      const computed = body.new_columns.filter((c) => c.computed);
      if (computed.length) {
        // Lance declares computed columns in a call of their own: mixed with others they would be two commits.
        if (computed.length !== body.new_columns.length || computed.some((c) => c.expression)) {
          throw invalidInput('computed columns are added in a request of their own: give every new column `computed`, or none');
        }
        return s.mutations.addComputedColumns(ctx, table, computed.map((c) => ({ name: c.name, expression: c.computed! })));
      }
      const columns = body.new_columns.map((c) => {
        if (c.virtual_column) {
          throw new CatalogError(ErrorCode.Unsupported, `new_columns: column '${c.name}': virtual_column binds a UDF, which needs a UDF runtime this server does not have; add an expression or computed column`);
        }
        if (!c.expression) throw invalidInput(`column '${c.name}': give its expression, computed or virtual_column`);
        return { name: c.name, expression: c.expression };
      });
      return s.mutations.addColumns(ctx, table, columns);
    },
  }),
  /** Answers 202 with the job's transaction at once; a worker fills the column. */
  operation({
    operationId: 'AlterTableBackfillColumns',
    method: 'POST',
    path: '/v1/table/:id/backfill_column',
    access: 'write',
    status: 202,
    body: backfillColumnBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => {
      if (body.read_version !== null && body.read_version !== undefined) {
        throw new CatalogError(ErrorCode.Unsupported, "read_version: the Lance library this server runs fills a computed column from the table's latest version only; leave it out");
      }
      return s.backfills.requestBackfill(ctx, { ...table, column: body.column, where: body.where ?? undefined, options: jobOptions(body, BACKFILL_OPTIONS) });
    },
  }),
];

/**
 * CreateTable's `storage_options`: the write-time options of a new dataset that Lance reads from
 * its storage options. Only these pass: every other storage option says where, or as whom, the
 * server's own process writes (endpoints, credentials, regions), which is the server's to decide.
 */
export const WRITE_STORAGE_OPTIONS = ['new_table_data_storage_version', 'new_table_enable_v2_manifest_paths', 'new_table_enable_stable_row_ids'] as const;

function writeOptions(options: Record<string, string>): Record<string, string> | undefined {
  const refused = Object.keys(options).filter((k) => !(WRITE_STORAGE_OPTIONS as readonly string[]).includes(k));
  if (refused.length) {
    throw invalidInput(
      `storage_options: ${refused.map((k) => `'${k.slice(0, 64)}'`).join(', ')} cannot be set by a caller: the server writes with its own storage settings`,
      `Write-time options it passes to Lance: ${WRITE_STORAGE_OPTIONS.join(', ')}.`,
    );
  }
  return Object.keys(options).length ? options : undefined;
}

/**
 * What a backfill's request says of how a distributed job is run: one worker job fills the column
 * here, so they change nothing, and are kept as the job's transaction properties, as asked.
 */
const BACKFILL_OPTIONS = [
  'concurrency',
  'intra_applier_concurrency',
  'min_checkpoint_size',
  'max_checkpoint_size',
  'batch_checkpoint_flush_interval_seconds',
  'task_size',
  'num_frags',
  'checkpoint_size',
  'commit_granularity',
  'cluster',
  'manifest',
] as const;

/** The options a request gives (nulls left out), as transaction properties. */
export function jobOptions<B extends Record<string, unknown>>(body: B, names: readonly (keyof B & string)[]): Record<string, string> {
  const options = Object.fromEntries(names.filter((k) => body[k] !== null && body[k] !== undefined).map((k) => [k, String(body[k])]));
  const problem = propertyMapProblem(options, inputLimits().properties);
  if (problem) throw invalidInput(`${Object.keys(options).join(', ')}: ${problem}`);
  return options;
}

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' ? v : undefined;
}

function jsonMap(raw: string | undefined, what: string): Record<string, string> {
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidInput(`${what} must be a JSON object of strings`);
  }
  const result = checkedParse(stringMap, parsed);
  if (!result.success) throw invalidInput(`${what}: ${result.error.issues[0]?.message ?? 'must be a JSON object of strings'}`);
  return result.data;
}

/** The query's and the header's properties together stay within what one map may hold. */
function withinLimits(properties: Record<string, string>, what: string): Record<string, string> {
  const problem = propertyMapProblem(properties, inputLimits().properties);
  if (problem) throw invalidInput(`${what}: ${problem}`);
  return properties;
}

/** Clients send `null` for options they leave unset; Lance wants them absent. */
function withoutNulls<T extends Record<string, unknown>>(o: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as never;
}

function filterParam(http: RestRequest, name: string): string | undefined {
  const v = http.queryString(name);
  return v ? checkSqlExpression(v, name) : undefined;
}
