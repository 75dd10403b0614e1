import { CatalogError, ErrorCode, MAX_NAME_LENGTH, invalidInput } from '@app/catalog';
import { parseViewQuery } from '@app/application';
import { checkArrowIpc } from '@app/lance';
import { createMaterializedViewBody, refreshMaterializedViewBody } from '../http/body-schemas';
import { inputLimits } from '../http/input-limits';
import { checkSqlExpression } from '../http/sql-expression';
import { jobOptions } from './data.operations';
import { operation } from './operation';

/**
 * What a refresh's request says of how a distributed refresh is run: one worker job refreshes the
 * whole view here, so they change nothing, and are kept as the job's transaction properties. A
 * manifest (a GenevaManifest: the environment of a view's UDFs) has nothing to configure in a
 * query view, which runs none.
 */
const REFRESH_OPTIONS = ['concurrency', 'intra_applier_concurrency', 'source_task_size', 'cluster', 'manifest'] as const;

/** The spec's MaterializedView operations: a view is lancedb's own, a table whose schema metadata holds its query. */
export const MATERIALIZED_VIEW_OPERATIONS = [
  operation({
    operationId: 'CreateMaterializedView',
    method: 'POST',
    path: '/v1/materialized_view/:id/create',
    access: 'write',
    status: 201,
    body: createMaterializedViewBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => {
      // The view's expressions reach Lance's parser and its schema apache-arrow's: bounded first.
      checkArrowIpc(Buffer.from(body.output_schema, 'base64'), inputLimits().arrow, 'output_schema');
      if (body.kind === 'query' && body.udtf_spec !== null && body.udtf_spec !== undefined) {
        throw invalidInput('udtf_spec must be null when kind is query: a query view runs no UDTF');
      }
      if (body.kind === 'query') {
        const query = parseViewQuery(body.source_query);
        for (const [output, expression] of query.select) {
          if (output.length > MAX_NAME_LENGTH) throw invalidInput(`source_query: an output name is longer than ${MAX_NAME_LENGTH} characters`);
          checkSqlExpression(expression, `source_query: the expression of '${output}'`);
        }
        if (query.where) checkSqlExpression(query.where, 'source_query: filter');
      }
      return s.views.createMaterializedView(ctx, {
        id: table.id,
        kind: body.kind,
        sourceQuery: body.source_query,
        outputSchema: body.output_schema,
        withNoData: body.with_no_data ?? true,
        autoRefresh: body.auto_refresh ?? false,
      });
    },
  }),
  /** Answers 202 with the refresh's transaction at once; a worker refreshes the view. */
  operation({
    operationId: 'RefreshMaterializedView',
    method: 'POST',
    path: '/v1/materialized_view/:id/refresh',
    access: 'write',
    status: 202,
    body: refreshMaterializedViewBody,
    subject: 'table',
    handle: ({ ctx, table, body }, s) => {
      // Only query views are made here: the spec's answer to a chunker's option on any other kind.
      if (body.output_limit !== null && body.output_limit !== undefined) throw invalidInput('output_limit is valid only for chunker materialized views; this view is a query view');
      if (body.max_rows_per_fragment !== null && body.max_rows_per_fragment !== undefined) {
        throw new CatalogError(ErrorCode.Unsupported, "max_rows_per_fragment: lancedb's refresh, which this server runs, writes the view's fragments at its own size; leave it out");
      }
      if (body.manifest) {
        try {
          JSON.parse(body.manifest);
        } catch {
          throw invalidInput('manifest must be a JSON-serialized GenevaManifest');
        }
      }
      return s.views.requestRefresh(ctx, { id: table.id, sourceVersion: body.src_version ?? undefined, options: jobOptions(body, REFRESH_OPTIONS) });
    },
  }),
];
