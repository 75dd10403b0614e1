import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CreateTableVersion, ObjectId, branchOf, invalidInput, requireTableId, validateId } from '@app/catalog';
import { BatchCommitRequest, BatchCommitService, RequestContext, VersionService } from '@app/application';
import { WRITER_HEADER } from '@app/lance';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  batchCommitTablesBody,
  batchCreateTableVersionsBody,
  createTableVersionBody,
  deleteTableVersionsBody,
  describeTableVersionBody,
  listTableVersionsBody,
  oneOf,
  parseBody,
} from '../http/body-schemas';
import { BatchOperationKind } from '../auth/access-policy';
import { requireBatchAccess } from '../auth/batch-access';
import { RestRequest } from '../http/rest-request';
import { RestRequests } from '../http/rest-request.factory';

const ID = 3;
type VersionBody = z.infer<typeof createTableVersionBody>;

function createVersionCommand(id: ObjectId, body: Omit<VersionBody, 'id' | 'context' | 'identity'>): CreateTableVersion {
  const branch = branchOf(body.branch);
  return {
    id,
    ...(branch !== undefined ? { branch } : {}),
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
function tableIdOf(id: unknown, r: RestRequest, what: string): ObjectId {
  if (!Array.isArray(id)) throw invalidInput(`${what}: id is required`);
  return requireTableId(validateId(id, `${what} id`, r.delimiter));
}

@Controller('v1/table')
export class VersionController {
  constructor(
    private readonly rest: RestRequests,
    private readonly versions: VersionService,
    private readonly batches: BatchCommitService,
  ) {}

  /**
   * The body may be the JSON literal `null`. Paging, order and branch are read from the query, as
   * the binding passes them, or else from the body, where the request model has them.
   */
  @Post(':id/version/list')
  @HttpCode(200)
  list(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(listTableVersionsBody, r.body());
    return this.versions.listTableVersions(
      r.context(body.context),
      requireTableId(r.objectId(ID, body)),
      r.pageOr(body),
      r.queryBool('descending', body.descending ?? false),
      branchOf(r.queryString('branch') ?? body.branch),
    );
  }

  @Post(':id/version/create')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(createTableVersionBody, r.body());
    // The server's own writes say which of its writers committed, so their data change can ride along.
    const writer = req.headers[WRITER_HEADER];
    return this.versions.createTableVersion(
      r.context(body.context),
      createVersionCommand(requireTableId(r.objectId(ID, body)), body),
      typeof writer === 'string' ? writer : undefined,
    );
  }

  @Post(':id/version/describe')
  @HttpCode(200)
  describe(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(describeTableVersionBody, r.body());
    return this.versions.describeTableVersion(
      r.context(body.context),
      requireTableId(r.objectId(ID, body)),
      body.version ?? undefined,
      branchOf(body.branch),
    );
  }

  @Post(':id/version/delete')
  @HttpCode(200)
  delete(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(deleteTableVersionsBody, r.body());
    return this.versions.batchDeleteTableVersions(
      r.context(body.context),
      requireTableId(r.objectId(ID, body)),
      body.ranges.map((x) => ({ startVersion: x.start_version, endVersion: x.end_version })),
      branchOf(body.branch),
    );
  }

  @Post('version/batch-create')
  @HttpCode(200)
  batchCreate(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(batchCreateTableVersionsBody, r.body());
    const entries = body.entries.map((e, i) => createVersionCommand(tableIdOf(e.id, r, `entries[${i}]`), e));
    const ctx = r.context(body.context);
    requireBatchAccess(req, ctx.database, entries.map(() => 'create_table_version'));
    return this.versions.batchCreateTableVersions(ctx, entries);
  }

  @Post('batch-commit')
  @HttpCode(200)
  batchCommit(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(batchCommitTablesBody, r.body());
    const ctx: RequestContext = r.context(body.context);
    const operations: BatchCommitRequest[] = body.operations.map((op, i) => {
      const what = `operations[${i}]`;
      switch (oneOf(op, ['declare_table', 'create_table_version', 'delete_table_versions', 'deregister_table'] as const, what)) {
        case 'declare_table': {
          const d = op.declare_table!;
          return { declare_table: { id: tableIdOf(d.id, r, what), location: d.location ?? undefined, properties: d.properties ?? {} } };
        }
        case 'create_table_version': {
          const c = op.create_table_version!;
          return { create_table_version: createVersionCommand(tableIdOf(c.id, r, what), c) };
        }
        case 'delete_table_versions': {
          const d = op.delete_table_versions!;
          const branch = branchOf(d.branch);
          return {
            delete_table_versions: {
              id: tableIdOf(d.id, r, what),
              ...(branch !== undefined ? { branch } : {}),
              ranges: d.ranges.map((x) => ({ startVersion: x.start_version, endVersion: x.end_version })),
            },
          };
        }
        case 'deregister_table':
          return { deregister_table: { id: tableIdOf(op.deregister_table!.id, r, what) } };
      }
    });
    requireBatchAccess(req, ctx.database, operations.map((op) => Object.keys(op)[0] as BatchOperationKind));
    return this.batches.batchCommitTables(ctx, operations);
  }
}
