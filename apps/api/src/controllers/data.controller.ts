import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import { invalidInput, parseMode, propertyMapProblem, requireTableId } from '@app/catalog';
import { AnalysisService, CREATE_TABLE_MODES, CreateTableService, DataService, INSERT_MODES } from '@app/application';
import { readArrowBody } from '@app/lance';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { countRowsBody, explainPlanBody, parseBody, queryTableBody, stringMap } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';
import { inputLimits } from '../http/input-limits';
import { branchField } from '../http/branch-param';

const ID = 3;

@Controller('v1/table')
export class DataController {
  constructor(
    private readonly rest: RestRequests,
    private readonly data: DataService,
    private readonly creates: CreateTableService,
    private readonly analysis: AnalysisService,
  ) {}

  /** The answer is the plan as plain text. */
  @Post(':id/explain_plan')
  @HttpCode(200)
  @Header('content-type', 'text/plain; charset=utf-8')
  explainPlan(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(explainPlanBody, r.body());
    const { id: _i, context: _c, identity: _x, branch, version, ...query } = body.query;
    return this.data.explainQuery(
      r.context(body.context),
      { ...withoutNulls(query), id: requireTableId(r.objectId(ID, body)), version: version ?? undefined, ...branchField(body.branch ?? branch) },
      body.verbose ?? false,
    );
  }

  /** Runs on a worker; the answer is the analysis as plain text, or 503 code 17 if none answers in time. */
  @Post(':id/analyze_plan')
  @HttpCode(200)
  @Header('content-type', 'text/plain; charset=utf-8')
  analyzePlan(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(queryTableBody, r.body());
    const { id: _i, context, identity: _x, branch, version, ...query } = body;
    return this.analysis.analyze(r.context(context), {
      ...withoutNulls(query),
      id: requireTableId(r.objectId(ID, body)),
      version: version ?? undefined,
      ...branchField(branch),
    });
  }

  @Post(':id/insert')
  @HttpCode(200)
  insert(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const mode = parseMode(r.queryString('mode'), INSERT_MODES, 'mode', 'Append');
    return this.data.insertIntoTable(r.context(), {
      id: requireTableId(r.pathId(ID)),
      mode,
      data: readArrowBody(req.body, inputLimits().arrow),
      ...branchField(r.queryString('branch')),
    });
  }

  @Post(':id/create')
  @HttpCode(200)
  create(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const mode = parseMode(r.queryString('mode'), CREATE_TABLE_MODES, 'mode', 'Create');
    const location = req.headers['x-lance-table-location'];
    return this.creates.createTable(r.context(), {
      id: requireTableId(r.pathId(ID)),
      mode,
      data: readArrowBody(req.body, inputLimits().arrow),
      location: typeof location === 'string' && location ? location : undefined,
      properties: withinLimits(
        {
          ...jsonMap(r.queryString('properties'), 'properties'),
          ...jsonMap(headerOf(req, 'x-lance-table-properties'), 'x-lance-table-properties'),
        },
        'properties',
      ),
    });
  }

  /** The answer is a bare integer. */
  @Post(':id/count_rows')
  @HttpCode(200)
  @Header('content-type', 'application/json')
  async countRows(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(countRowsBody, r.body());
    const count = await this.data.countTableRows(r.context(body.context), {
      id: requireTableId(r.objectId(ID, body)),
      version: body.version ?? undefined,
      predicate: body.predicate ?? undefined,
      ...branchField(body.branch),
    });
    return JSON.stringify(count);
  }

  /** The answer is an Arrow IPC file. */
  @Post(':id/query')
  @HttpCode(200)
  @Header('content-type', 'application/vnd.apache.arrow.file')
  async query(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(queryTableBody, r.body());
    const { id: _id, context, identity: _identity, branch, version, ...query } = body;
    const file = await this.data.queryTable(r.context(context), {
      ...withoutNulls(query),
      id: requireTableId(r.objectId(ID, body)),
      version: version ?? undefined,
      ...branchField(branch),
    });
    // A view of the encoded bytes, not a copy.
    return Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  }
}

function headerOf(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
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
  const result = stringMap.safeParse(parsed);
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

export type QueryBody = z.infer<typeof queryTableBody>;
