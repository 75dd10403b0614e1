import Fastify from 'fastify';
import { z } from 'zod';
import { OPERATIONS } from '../src/operations';
import { bindOperations } from '../src/operations/bind-operations';
import { Entry, OperationServices, isMount, mount, nameOf, operation, rawOperation } from '../src/operations/operation';
import { loadProtocolSpec, openApiPath, servedDocument } from '../src/openapi/served-document';
import { accessOf } from '../src/auth/access-policy';

/** The routes this server adds to the spec, by the names their entries give them. */
const EXTENSIONS = [
  'Liveness',
  'Readiness',
  'Metrics',
  'OpenApiDocument',
  'ApiPage',
  'QueueDashboard',
  'StateDigest',
  'TableHistory',
  'NamespaceHistory',
  'TransactionHistory',
  'CompactTable',
  'OptimizeTableIndices',
  'ExpireTableVersions',
  'DescribeTableMaintenance',
  'EnterpriseListTables',
  'EnterpriseCreateTable',
  'Console',
  'WhoAmI',
  'DatabaseHistory',
  'LiveHistory',
  'CreateGrant',
  'RevokeGrant',
  'ListGrants',
  'CheckGrant',
  'CreateSubscription',
  'ListSubscriptions',
  'DescribeSubscription',
  'DeleteSubscription',
];
const LEVELS = ['read', 'write', 'admin', 'public', 'any-database', 'admin-all'];

describe('the table of operations', () => {
  const spec = loadProtocolSpec();
  const specOperations = Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId?: string }>)
      .filter(([method]) => method === 'get' || method === 'post')
      .map(([method, op]) => ({ operationId: op.operationId!, method: method.toUpperCase(), path })),
  );

  it("has one entry per operationId of the spec, at the spec's method and path", () => {
    const entries = OPERATIONS.filter((e): e is Exclude<Entry, { prefix: string }> => !isMount(e) && !!e.operationId);
    expect(entries.map((e) => e.operationId).sort()).toEqual(specOperations.map((o) => o.operationId).sort());
    for (const entry of entries) {
      expect({ operationId: entry.operationId, method: entry.method, path: openApiPath(entry.path) }).toEqual(specOperations.find((o) => o.operationId === entry.operationId));
    }
  });

  it("has an entry for each of this server's named extensions, and nothing else", () => {
    expect(OPERATIONS.filter((e) => !('operationId' in e && e.operationId)).map(nameOf).sort()).toEqual([...EXTENSIONS].sort());
  });

  it('gives every entry an access level, and no two entries one route', () => {
    for (const entry of OPERATIONS) expect([nameOf(entry), LEVELS.includes(entry.access)]).toEqual([nameOf(entry), true]);
    const routes = OPERATIONS.map((e) => (isMount(e) ? e.prefix : `${e.method} ${e.path}`));
    expect(new Set(routes).size).toBe(routes.length);
  });

  it('is what the access policy reads', () => {
    for (const entry of OPERATIONS) {
      if (isMount(entry)) expect(accessOf('GET', `${entry.prefix}/anything`)).toBe(entry.access);
      else expect(accessOf(entry.method, entry.path)).toBe(entry.access);
    }
    expect(accessOf('POST', '/v1/table/:id/nothing-here')).toBeUndefined();
  });

  it("is what the served document lists: the spec's own description of each operation, and the extensions' of theirs", () => {
    const document = servedDocument(spec, OPERATIONS);
    const listed = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).filter((k) => k === 'get' || k === 'post').map((m) => `${m.toUpperCase()} ${path}`));
    const routes = OPERATIONS.flatMap((e) => (isMount(e) ? (e.doc ? [`GET ${e.prefix}`] : []) : [`${e.method} ${openApiPath(e.path)}`]));
    expect(listed.sort()).toEqual(routes.sort());
    expect(document.paths['/v1/table/{id}/stats'].post).toBe(spec.paths['/v1/table/{id}/stats'].post);
    expect(document.paths['/v1/history/table/{id}'].get).toMatchObject({ tags: ['History'], parameters: [{ name: 'id', in: 'path' }] });
    expect(document.paths['/v1/table/{id}/maintenance/compact'].post).toMatchObject({ responses: { '202': { description: 'OK' } } });
  });

  it("describes an extension's media type and query, and a page mounted with a description", () => {
    const feed = rawOperation({ extension: 'Feed', doc: { tag: 'History', summary: 'events', media: 'text/event-stream', query: ['after'] }, method: 'GET', path: '/v1/feed', access: 'read', serve: () => '' });
    const page = mount({ extension: 'Page', doc: { tag: 'Console', summary: 'a page', media: 'text/html' }, prefix: '/page', access: 'public', install: async () => undefined });
    const document = servedDocument(spec, [feed, page]);
    expect(document.paths['/v1/feed'].get).toMatchObject({ parameters: [{ name: 'after', in: 'query' }], responses: { '200': { content: { 'text/event-stream': {} } } } });
    expect(Object.keys(document.paths)).toEqual(['/page', '/v1/feed']);
  });
});

describe('entries bound on Fastify', () => {
  const thing = z.object({ id: z.array(z.string()).nullish(), context: z.record(z.string(), z.string()).nullish(), branch: z.string().nullish(), n: z.number().nullish() });
  const entries: Entry[] = [
    operation({ extension: 'List', method: 'GET', path: '/v1/things', access: 'read', body: 'none', subject: 'none', handle: ({ http }) => ({ limit: http.page().limit ?? null }) }),
    operation({
      extension: 'Describe',
      method: 'POST',
      path: '/v1/things/:id/describe',
      access: 'read',
      body: thing,
      subject: 'table',
      branch: 'body',
      handle: ({ table, body, ctx }) => ({ table, n: body.n ?? null, database: ctx.database, context: ctx.context }),
    }),
    operation({ extension: 'Created', method: 'POST', path: '/v1/things/:id/create', access: 'write', status: 201, body: thing, subject: 'namespace', handle: ({ namespace }) => ({ namespace }) }),
    operation({ extension: 'Count', method: 'POST', path: '/v1/things/:id/count', access: 'read', answer: 'number', body: thing, subject: 'table', handle: async () => 42 }),
    operation({ extension: 'Plan', method: 'POST', path: '/v1/things/:id/plan', access: 'read', answer: 'string', body: thing, subject: 'table', handle: () => 'Scan\n  "x" > 1' }),
    operation({ extension: 'Keyed', method: 'GET', path: '/v1/keyed', access: 'read', credential: 'x-api-key', body: 'none', subject: 'none', handle: () => ({ ok: true }) }),
    rawOperation({ extension: 'Thrown', method: 'GET', path: '/v1/thrown', access: 'public', serve: () => { throw new Error('refused at once'); } }),
    rawOperation({ extension: 'Rejected', method: 'GET', path: '/v1/rejected', access: 'public', serve: async () => { throw new Error('refused later'); } }),
    rawOperation({ extension: 'Streamed', method: 'GET', path: '/v1/streamed', access: 'public', serve: (_request, reply) => reply.code(207).header('content-type', 'text/event-stream').send('data: one\n\n') }),
    mount({ extension: 'Page', prefix: '/page', access: 'public', install: async (fastify) => void fastify.get('/page/a', async () => 'a page') }),
  ];
  const services = { config: { defaultDatabase: 'db' }, operations: entries } as unknown as OperationServices;
  const app = Fastify();
  app.setErrorHandler((error: Error & { code?: number }, _request, reply) => void reply.code(418).send({ error: error.message, code: error.code }));
  app.addHook('preValidation', (request, _reply, done) => {
    request.principal = { name: 'anonymous', via: 'anonymous', grants: new Map() } as never;
    done();
  });

  beforeAll(() => bindOperations(app, services));
  afterAll(() => app.close());

  it('registers every route and mount, and nothing else', () => {
    expect(app.hasRoute({ method: 'GET', url: '/v1/things' })).toBe(true);
    expect(app.hasRoute({ method: 'POST', url: '/v1/things/:id/describe' })).toBe(true);
    expect(app.hasRoute({ method: 'GET', url: '/page/a' })).toBe(true);
    expect(app.hasRoute({ method: 'GET', url: '/v1/things/helper' })).toBe(false);
  });

  it("hands the handler the request in the protocol's terms: the id, the branch, the body, the context", async () => {
    const described = await app.inject({
      method: 'POST',
      url: '/v1/things/ns$t/describe?delimiter=$',
      headers: { 'x-lance-ctx-origin': 'a test' },
      payload: { branch: 'dev', n: 7, context: { why: 'checking' } },
    });
    expect([described.statusCode, described.json()]).toEqual([
      200,
      { table: { id: ['ns', 't'], branch: 'dev' }, n: 7, database: 'db', context: { why: 'checking', origin: 'a test' } },
    ]);
    const onMain = await app.inject({ method: 'POST', url: '/v1/things/ns$t/describe?delimiter=$', payload: { branch: 'main' } });
    expect(onMain.json().table).toEqual({ id: ['ns', 't'] });
    const list = await app.inject({ method: 'GET', url: '/v1/things?limit=3' });
    expect([list.statusCode, list.json()]).toEqual([200, { limit: 3 }]);
  });

  it('refuses what does not parse before the handler runs, 400 code 13', async () => {
    const wrongType = await app.inject({ method: 'POST', url: '/v1/things/t/describe', payload: { n: 'seven' } });
    expect([wrongType.statusCode, wrongType.json().code]).toEqual([418, 13]);
    const otherId = await app.inject({ method: 'POST', url: '/v1/things/t/describe', payload: { id: ['u'] } });
    expect(otherId.json()).toMatchObject({ code: 13, error: expect.stringContaining('does not match the path id') });
    const noTable = await app.inject({ method: 'POST', url: '/v1/things/$/describe?delimiter=$', payload: {} });
    expect(noTable.json()).toMatchObject({ code: 13, error: 'a table id needs at least a table name' });
  });

  it('answers with the status and content type of its entry', async () => {
    const created = await app.inject({ method: 'POST', url: '/v1/things/a/create', payload: {} });
    expect([created.statusCode, created.json()]).toEqual([201, { namespace: ['a'] }]);
    const count = await app.inject({ method: 'POST', url: '/v1/things/a/count', payload: {} });
    expect([count.statusCode, count.headers['content-type'], count.body]).toEqual([200, 'application/json; charset=utf-8', '42']);
    const plan = await app.inject({ method: 'POST', url: '/v1/things/a/plan', payload: {} });
    expect([plan.headers['content-type'], plan.body]).toEqual(['application/json; charset=utf-8', '"Scan\\n  \\"x\\" > 1"']);
    expect(plan.json()).toBe('Scan\n  "x" > 1');
  });

  it('lets a raw handler answer through the reply itself', async () => {
    const streamed = await app.inject({ method: 'GET', url: '/v1/streamed' });
    expect([streamed.statusCode, streamed.headers['content-type'], streamed.body]).toEqual([207, 'text/event-stream', 'data: one\n\n']);
  });

  it('asks for an x-api-key where the entry needs one, even of an anonymous caller', async () => {
    expect((await app.inject({ method: 'GET', url: '/v1/keyed' })).json()).toMatchObject({ code: 16 });
    expect((await app.inject({ method: 'GET', url: '/v1/keyed', headers: { 'x-api-key': 'k' } })).json()).toEqual({ ok: true });
  });

  it("hands thrown and rejected errors to Fastify's error handler", async () => {
    const thrown = await app.inject({ method: 'GET', url: '/v1/thrown' });
    expect([thrown.statusCode, thrown.json().error]).toEqual([418, 'refused at once']);
    const rejected = await app.inject({ method: 'GET', url: '/v1/rejected' });
    expect([rejected.statusCode, rejected.json().error]).toEqual([418, 'refused later']);
  });
});
