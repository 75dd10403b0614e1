import { SCALAR_INDEX_TYPES, invalidInput, parseIndexType } from '@app/catalog';
import { refusedWhateverTheState } from './check-order';
import { createIndexBody, indexNameBody, listIndicesBody } from '../http/body-schemas';
import { operation } from './operation';

/** `/v1/table/:id/index/:index_name/...`: where the index's name sits in the path. */
const INDEX_NAME = 5;

/** Answers at once with the build's transaction; a worker builds the index. */
const createIndex = (operationId: string, path: string, scalarOnly = false) =>
  operation({
    operationId,
    method: 'POST',
    path,
    access: 'write',
    body: createIndexBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => {
      const { id: _i, context: _c, identity: _x, branch: _b, column, index_type, name, ...params } = body;
      const indexType = parseIndexType(index_type);
      if (scalarOnly && !(SCALAR_INDEX_TYPES as readonly string[]).includes(indexType)) {
        // The route can never build it, whatever the table: refused before the table is looked up.
        throw refusedWhateverTheState(
          invalidInput(`index_type '${index_type}' is not a scalar index; CreateTableScalarIndex builds ${SCALAR_INDEX_TYPES.join(', ')}; use CreateTableIndex for vector indexes`),
        );
      }
      return s.indexes.createTableIndex(ctx, {
        ...table,
        name: name ?? undefined,
        column,
        indexType,
        params: Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null && v !== undefined)),
      });
    },
  });

/** The spec's Index operations. */
export const INDEX_OPERATIONS = [
  createIndex('CreateTableIndex', '/v1/table/:id/create_index'),
  /** The same request and answer as CreateTableIndex, as the spec defines it. */
  createIndex('CreateTableScalarIndex', '/v1/table/:id/create_scalar_index', true),
  operation({
    operationId: 'ListTableIndices',
    method: 'POST',
    path: '/v1/table/:id/index/list',
    access: 'read',
    body: listIndicesBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body, http }, s) => s.indexes.listTableIndices(ctx, { ...table, version: body.version ?? undefined, page: http.pageOr(body) }),
  }),
  operation({
    operationId: 'DescribeTableIndexStats',
    method: 'POST',
    path: '/v1/table/:id/index/:index_name/stats',
    access: 'read',
    body: indexNameBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body, http }, s) => {
      const indexName = http.pathText(INDEX_NAME);
      // The body may repeat the path's index name, as it may the id: it must then agree.
      if (body.index_name && body.index_name !== indexName) throw invalidInput(`the body's index_name '${body.index_name}' does not match the path's '${indexName}'`);
      return s.indexes.describeIndexStats(ctx, table.id, indexName, body.version ?? undefined, table.branch);
    },
  }),
  operation({
    operationId: 'DropTableIndex',
    method: 'POST',
    path: '/v1/table/:id/index/:index_name/drop',
    access: 'write',
    body: indexNameBody,
    subject: 'table',
    branch: 'body, then query',
    handle: ({ ctx, table, http }, s) => s.indexes.dropTableIndex(ctx, table.id, http.pathText(INDEX_NAME), table.branch),
  }),
];
