import { CreateTableVersion, ObjectId, TableRef, branchOf, invalidInput, requireTableId, validateId } from '@app/catalog';
import { BatchCommitRequest } from '@app/application';
import { WRITER_HEADER } from '@app/lance';
import type { z } from 'zod';
import { requireBatchAccess } from './batch-access';
import {
  batchCommitTablesBody,
  batchCreateTableVersionsBody,
  createTableVersionBody,
  deleteTableVersionsBody,
  describeTableVersionBody,
  listTableVersionsBody,
  oneOf,
} from '../http/body-schemas';
import { Operation, operation } from './operation';
import { DeclareTable, DeregisterTable } from './table.operations';

type VersionBody = z.infer<typeof createTableVersionBody>;

/** The command a version entry asks for, from a request or from an entry of a batch. */
function createVersionCommand(table: TableRef, body: Omit<VersionBody, 'id' | 'context' | 'identity' | 'branch'>): CreateTableVersion {
  return {
    ...table,
    version: body.version,
    stagingManifestPath: body.manifest_path,
    manifestSize: body.manifest_size ?? undefined,
    eTag: body.e_tag ?? undefined,
    metadata: body.metadata ?? undefined,
    namingScheme: body.naming_scheme ?? 'V2',
    timestampMillis: Date.now(),
  };
}

/** Ids inside batch bodies have no path to match, so they are checked here. */
function tableIdOf(id: unknown, delimiter: string, what: string): ObjectId {
  if (!Array.isArray(id)) throw invalidInput(`${what}: id is required`);
  return requireTableId(validateId(id, `${what} id`, delimiter));
}

function onLine(id: ObjectId, branch: string | null | undefined): TableRef {
  const named = branchOf(branch);
  return named === undefined ? { id } : { id, branch: named };
}

/** Also an operation of BatchCreateTableVersions and BatchCommitTables. */
export const CreateTableVersionOperation = operation({
  operationId: 'CreateTableVersion',
  method: 'POST',
  path: '/v1/table/:id/version/create',
  access: 'write',
  body: createTableVersionBody,
  subject: 'table',
  branch: 'body',
  handle: ({ ctx, table, body, raw }, s) => {
    // The server's own writes say which of its writers committed, so their data change can ride along.
    const writer = raw.headers[WRITER_HEADER];
    return s.versions.createTableVersion(ctx, createVersionCommand(table, body), typeof writer === 'string' ? writer : undefined);
  },
});

/** Also an operation of BatchCommitTables. */
export const BatchDeleteTableVersions = operation({
  operationId: 'BatchDeleteTableVersions',
  method: 'POST',
  path: '/v1/table/:id/version/delete',
  access: 'admin',
  body: deleteTableVersionsBody,
  subject: 'table',
  branch: 'body',
  handle: ({ ctx, table, body }, s) =>
    s.versions.batchDeleteTableVersions(
      ctx,
      table.id,
      body.ranges.map((x) => ({ startVersion: x.start_version, endVersion: x.end_version })),
      table.branch,
    ),
});

type BatchKind = 'declare_table' | 'create_table_version' | 'delete_table_versions' | 'deregister_table';

/** Inside a batch each operation needs the level of its own entry: a batch is never a way around one. */
const BATCH_OPERATIONS: Record<BatchKind, Operation> = {
  declare_table: DeclareTable,
  create_table_version: CreateTableVersionOperation,
  delete_table_versions: BatchDeleteTableVersions,
  deregister_table: DeregisterTable,
};

/** The spec's operations on a table's versions (tags Table, Metadata), one at a time and in batches. */
export const TABLE_VERSION_OPERATIONS = [
  /** The body may be the JSON literal `null`. Paging and order come from the query, as the binding passes them, or else from the body. */
  operation({
    operationId: 'ListTableVersions',
    method: 'POST',
    path: '/v1/table/:id/version/list',
    access: 'read',
    body: listTableVersionsBody,
    subject: 'table',
    branch: 'query, then body',
    handle: ({ ctx, table, body, http }, s) =>
      s.versions.listTableVersions(ctx, table.id, http.pageOr(body), http.queryBool('descending', body.descending ?? false), table.branch),
  }),
  CreateTableVersionOperation,
  operation({
    operationId: 'DescribeTableVersion',
    method: 'POST',
    path: '/v1/table/:id/version/describe',
    access: 'read',
    body: describeTableVersionBody,
    subject: 'table',
    branch: 'body',
    handle: ({ ctx, table, body }, s) => s.versions.describeTableVersion(ctx, table.id, body.version ?? undefined, table.branch),
  }),
  BatchDeleteTableVersions,
  operation({
    operationId: 'BatchCreateTableVersions',
    method: 'POST',
    path: '/v1/table/version/batch-create',
    access: 'write',
    body: batchCreateTableVersionsBody,
    subject: 'none',
    handle: ({ ctx, body, http, raw }, s) => {
      const entries = body.entries.map((e, i) => createVersionCommand(onLine(tableIdOf(e.id, http.delimiter, `entries[${i}]`), e.branch), e));
      requireBatchAccess(raw, ctx.database, entries.map((e) => ({ kind: 'create_table_version', level: CreateTableVersionOperation.access, table: e.id })));
      return s.versions.batchCreateTableVersions(ctx, entries);
    },
  }),
  operation({
    operationId: 'BatchCommitTables',
    method: 'POST',
    path: '/v1/table/batch-commit',
    access: 'write',
    body: batchCommitTablesBody,
    subject: 'none',
    handle: ({ ctx, body, http, raw }, s) => {
      const operations: BatchCommitRequest[] = body.operations.map((op, i) => {
        const what = `operations[${i}]`;
        switch (oneOf(op, ['declare_table', 'create_table_version', 'delete_table_versions', 'deregister_table'] as const, what)) {
          case 'declare_table': {
            const d = op.declare_table!;
            return {
              declare_table: { id: tableIdOf(d.id, http.delimiter, what), location: d.location ?? undefined, properties: d.properties ?? {}, vendCredentials: d.vend_credentials ?? undefined },
            };
          }
          case 'create_table_version': {
            const c = op.create_table_version!;
            return { create_table_version: createVersionCommand(onLine(tableIdOf(c.id, http.delimiter, what), c.branch), c) };
          }
          case 'delete_table_versions': {
            const d = op.delete_table_versions!;
            return {
              delete_table_versions: {
                ...onLine(tableIdOf(d.id, http.delimiter, what), d.branch),
                ranges: d.ranges.map((x) => ({ startVersion: x.start_version, endVersion: x.end_version })),
              },
            };
          }
          case 'deregister_table':
            return { deregister_table: { id: tableIdOf(op.deregister_table!.id, http.delimiter, what) } };
        }
      });
      requireBatchAccess(
        raw,
        ctx.database,
        operations.map((op) => {
          const kind = Object.keys(op)[0] as BatchKind;
          const { id } = Object.values(op)[0] as { id: ObjectId };
          return { kind, level: BATCH_OPERATIONS[kind].access, table: id, makes: kind === 'declare_table' };
        }),
      );
      return s.batches.batchCommitTables(ctx, operations);
    },
  }),
];
