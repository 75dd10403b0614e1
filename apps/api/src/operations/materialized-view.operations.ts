import { CatalogError, ErrorCode, MAX_NAME_LENGTH, invalidInput } from '@app/catalog';
import { parseViewQuery } from '@app/application';
import { checkArrowIpc } from '@app/lance';
import { createMaterializedViewBody, refreshMaterializedViewBody } from '../http/body-schemas';
import { inputLimits } from '../http/input-limits';
import { checkSqlExpression } from '../http/sql-expression';
import { operation } from './operation';

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
      const unsupported = (['cluster', 'output_limit', 'manifest'] as const).filter((k) => body[k] !== null && body[k] !== undefined);
      if (unsupported.length) {
        throw new CatalogError(ErrorCode.Unsupported, `${unsupported.join(', ')}: a refresh here runs lancedb's own refresh of the whole view in one worker job; leave them out`);
      }
      return s.views.requestRefresh(ctx, { id: table.id, sourceVersion: body.src_version ?? undefined });
    },
  }),
];
