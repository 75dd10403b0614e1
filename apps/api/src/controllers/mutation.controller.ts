import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { CatalogError, ErrorCode, MAX_NAME_LENGTH, invalidInput, requireTableId } from '@app/catalog';
import { DataMutationService } from '@app/application';
import { readArrowBody } from '@app/lance';
import type { FastifyRequest } from 'fastify';
import {
  addColumnsBody,
  alterColumnsBody,
  deleteBody,
  dropColumnsBody,
  parseBody,
  statsBody,
  updateBody,
  updateFieldMetadataBody,
} from '../http/body-schemas';
import { RestRequest } from '../http/rest-request';
import { checkSqlExpression } from '../http/sql-expression';
import { RestRequests } from '../http/rest-request.factory';
import { inputLimits } from '../http/input-limits';
import { branchField } from '../http/branch-param';

const ID = 3;

@Controller('v1/table')
export class MutationController {
  constructor(
    private readonly rest: RestRequests,
    private readonly mutations: DataMutationService,
  ) {}

  /** The body is the Arrow stream; the matching options are query parameters. */
  @Post(':id/merge_insert')
  @HttpCode(200)
  mergeInsert(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const on = (r.queryString('on') ?? '').split(',').map((c) => c.trim()).filter(Boolean);
    if (on.some((c) => c.length > MAX_NAME_LENGTH)) throw invalidInput(`on: a column name is longer than ${MAX_NAME_LENGTH} characters`);
    const target = { id: requireTableId(r.pathId(ID)), ...branchField(r.queryString('branch')) };
    return this.mutations.mergeInsert(r.context(), target, readArrowBody(req.body, inputLimits().arrow), {
      on,
      whenMatchedUpdateAll: r.queryBool('when_matched_update_all', false),
      whenMatchedUpdateAllFilter: filterParam(r, 'when_matched_update_all_filt'),
      whenNotMatchedInsertAll: r.queryBool('when_not_matched_insert_all', false),
      whenNotMatchedBySourceDelete: r.queryBool('when_not_matched_by_source_delete', false),
      whenNotMatchedBySourceDeleteFilter: filterParam(r, 'when_not_matched_by_source_delete_filt'),
      timeoutMs: r.queryInt('timeout', 1),
      useIndex: r.queryString('use_index') === undefined ? undefined : r.queryBool('use_index', true),
    });
  }

  @Post(':id/update')
  @HttpCode(200)
  update(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, updateBody);
    return this.mutations.update(r.context(body.context), target, body.predicate ?? undefined, body.updates as Array<[string, string]>);
  }

  @Post(':id/delete')
  @HttpCode(200)
  delete(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, deleteBody);
    return this.mutations.delete(r.context(body.context), target, body.predicate);
  }

  @Post(':id/add_columns')
  @HttpCode(200)
  addColumns(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, addColumnsBody);
    const computed = body.new_columns.filter((c) => c.computed);
    if (computed.length) {
      // Lance declares computed columns in a call of their own: mixed with others they would be two commits.
      if (computed.length !== body.new_columns.length || computed.some((c) => c.expression)) {
        throw invalidInput('computed columns are added in a request of their own: give every new column `computed`, or none');
      }
      return this.mutations.addComputedColumns(r.context(body.context), target, computed.map((c) => ({ name: c.name, expression: c.computed! })));
    }
    const columns = body.new_columns.map((c) => {
      if (!c.expression) throw new CatalogError(ErrorCode.Unsupported, `column '${c.name}': only SQL-expression and computed columns can be added here`);
      return { name: c.name, expression: c.expression };
    });
    return this.mutations.addColumns(r.context(body.context), target, columns);
  }

  @Post(':id/alter_columns')
  @HttpCode(200)
  alterColumns(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, alterColumnsBody);
    return this.mutations.alterColumns(
      r.context(body.context),
      target,
      body.alterations.map((a) => ({
        path: a.path,
        ...(a.rename ? { rename: a.rename } : {}),
        ...(a.nullable !== null && a.nullable !== undefined ? { nullable: a.nullable } : {}),
        ...(a.data_type ? { dataType: typeof a.data_type === 'string' ? a.data_type : a.data_type.type } : {}),
      })),
    );
  }

  @Post(':id/drop_columns')
  @HttpCode(200)
  dropColumns(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, dropColumnsBody);
    return this.mutations.dropColumns(r.context(body.context), target, body.columns);
  }

  @Post(':id/update_field_metadata')
  @HttpCode(200)
  updateFieldMetadata(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, updateFieldMetadataBody);
    return this.mutations.updateFieldMetadata(
      r.context(body.context),
      target,
      body.updates.map((u) => ({ path: u.path, metadata: u.metadata, ...(u.replace ? { replace: true } : {}) })),
    );
  }

  /** Lance's JS library offers no way to rewrite schema-level metadata; say so plainly. */
  @Post(':id/schema_metadata/update')
  @HttpCode(200)
  updateSchemaMetadata(@Req() req: FastifyRequest) {
    this.rest.of(req).pathId(ID);
    throw new CatalogError(ErrorCode.Unsupported, 'UpdateTableSchemaMetadata is not supported by the Lance library this server runs; use update_field_metadata');
  }

  @Post(':id/stats')
  @HttpCode(200)
  stats(@Req() req: FastifyRequest) {
    const { r, body, target } = this.parse(req, statsBody);
    return this.mutations.stats(r.context(body.context), target);
  }

  private parse<S extends Parameters<typeof parseBody>[0]>(req: FastifyRequest, schema: S) {
    const r: RestRequest = this.rest.of(req);
    const body = parseBody(schema, r.body()) as ReturnType<typeof parseBody<S>> & { context?: Record<string, string> | null; branch?: string | null };
    return { r, body, target: { id: requireTableId(r.objectId(ID, body as { id?: unknown })), ...branchField(body.branch) } };
  }
}

function filterParam(r: RestRequest, name: string): string | undefined {
  const v = r.queryString(name);
  return v ? checkSqlExpression(v, name) : undefined;
}
