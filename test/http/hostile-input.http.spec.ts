import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { withFieldCount } from '../support/fuzz/arrow-ipc';
import { narrowTable } from '../support/fuzz/arrow-mutations';
import { schemaBase64 } from '../support/fuzz/seeds';
import { termChain } from '../support/fuzz/sql';
import { Answer, Sendable, aliveness, send } from '../support/fuzz/watch';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

/**
 * Inputs that once cost more than their own request: a filter whose 50,000 terms overflowed a
 * parser's stack, and an Arrow stream whose Schema claims 2^31-1 fields, which `tableFromIPC`
 * tried to read until the API's heap ran out. Each is refused as bad input, changes nothing, and
 * the server goes on answering. A case that stops the server is followed by a fresh one, so each
 * case stands alone.
 */
describe('inputs that once broke the server', () => {
  let server: RunningServer | undefined;
  let api: Api;
  const VECTOR = [1, 2, 3, 4, 5, 6, 7, 8];

  async function start(): Promise<void> {
    server = await startServer();
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/fz/create', {})).status).toBe(200);
    expect((await api.send('POST', '/v1/table/fz%24t/create', arrowStream(sampleTable(0, 50)), ARROW_STREAM)).status).toBe(200);
  }

  beforeEach(async () => {
    if (server && (await aliveness(server)).healthy) return;
    await server?.kill9();
    await start();
  }, 120_000);
  afterAll(() => server?.stop());

  /** The answer's status and code, or what became of the server when there was none. */
  async function outcome(answer: Answer): Promise<object> {
    if (answer.kind === 'answered') return { status: answer.status, code: answer.code };
    return { kind: answer.kind, server: (await aliveness(server!)).what };
  }

  /** Refused with 400 code 13, nothing changed, and the server still reads the table. */
  async function expectRefused(request: Sendable): Promise<void> {
    const before = (await api.get('/v1/history/digest')).body;
    const answer = await send(server!.url, request, { timeoutMs: 60_000 });
    expect(await outcome(answer)).toEqual({ status: 400, code: 13 });
    expect((await api.get('/healthz')).status).toBe(200);
    expect((await api.get('/v1/history/digest')).body).toEqual(before);
    expect((await api.post('/v1/table/fz%24t/count_rows', { predicate: 'id > 1' })).body).toBe(48);
  }

  const json = (path: string, body: unknown): Sendable => ({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const terms = termChain(50_000, 'id>1', ' AND ');

  it.each([
    ['CountTableRows', json('/v1/table/fz%24t/count_rows', { predicate: terms })],
    ['QueryTable', json('/v1/table/fz%24t/query', { filter: terms, k: 5, vector: VECTOR })],
    ['ExplainTableQueryPlan', json('/v1/table/fz%24t/explain_plan', { query: { filter: terms, k: 5, vector: VECTOR } })],
    ['AnalyzeTableQueryPlan', json('/v1/table/fz%24t/analyze_plan', { filter: terms, k: 5, vector: VECTOR })],
  ])('refuses a filter of 50,000 `id>1` terms joined by AND on %s', async (_operation, request) => {
    await expectRefused(request);
  }, 120_000);

  const fieldCount = withFieldCount(arrowStream(narrowTable()), 0x7fffffff);
  const arrow = (path: string, headers: Record<string, string> = {}): Sendable => ({ method: 'POST', path, headers: { ...ARROW_STREAM, ...headers }, body: fieldCount });

  it.each([
    ['InsertIntoTable', arrow('/v1/table/fz%24t/insert')],
    ['CreateTable', arrow('/v1/table/fz%24new/create')],
    ['MergeInsertIntoTable', arrow('/v1/table/fz%24t/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true')],
    ['CreateTable (the LanceDB Enterprise route)', arrow('/v1/tables/fz%24ent', { 'x-api-key': 'any' })],
    [
      "CreateMaterializedView's output_schema",
      json('/v1/materialized_view/view/create', {
        kind: 'query',
        source_query: JSON.stringify({ source_table: 'src', select: ['id', 'x'] }),
        output_schema: fieldCount.toString('base64'),
        with_no_data: true,
      }),
    ],
  ])('refuses an Arrow stream whose Schema claims 2^31-1 fields on %s', async (_operation, request) => {
    await expectRefused(request);
  }, 120_000);

  it('still takes the same stream with its true field count', async () => {
    const intact = withFieldCount(arrowStream(narrowTable()), 2);
    expect((await api.send('POST', '/v1/table/fz%24narrow/create', intact, ARROW_STREAM)).status).toBe(200);
    expect((await api.post('/v1/table/fz%24narrow/count_rows', {})).body).toBe(2);
    const view = await api.post('/v1/materialized_view/view/create', {
      kind: 'query',
      source_query: JSON.stringify({ source_table: 'src', select: ['id', 'x'] }),
      output_schema: schemaBase64(['id', 'x']),
    });
    // Past the schema check: the source table does not exist.
    expect(view.body.code).toBe(4);
  }, 120_000);
});
