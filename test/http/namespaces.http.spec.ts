import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

describe('namespace operations over HTTP', () => {
  let server: RunningServer;
  let api: Api;
  const ns = (...parts: string[]) => `/v1/namespace/${Api.id(parts)}`;

  beforeAll(async () => {
    server = await startServer({ entry: 'api' });
    api = new Api(server.url);
  });
  afterAll(() => server?.stop());

  it('has a root namespace that always exists', async () => {
    // The spec: the status is the answer, with no response body.
    const exists = await api.post(`${ns()}/exists`, {});
    expect([exists.status, exists.text, exists.headers.get('content-length'), exists.headers.get('content-type')]).toEqual([200, '', '0', null]);
    expect((await api.post(`${ns()}/describe`, {})).body).toEqual({ properties: {} });
    const create = await api.post(`${ns()}/create`, {});
    expect(create.status).toBe(409);
    expect(create.body.code).toBe(2);
    const drop = await api.post(`${ns()}/drop`, {});
    expect(drop.status).toBe(400);
    expect(drop.body.code).toBe(13);
  });

  it('creates with properties, refuses a duplicate, and honours ExistOk and Overwrite', async () => {
    const created = await api.post(`${ns('alpha')}/create`, { id: ['alpha'], properties: { owner: 'ralph' } });
    expect(created.status).toBe(200);
    expect(created.body.properties).toEqual({ owner: 'ralph' });
    expect(typeof created.body.transaction_id).toBe('string');

    const dup = await api.post(`${ns('alpha')}/create`, { mode: 'Create' });
    expect([dup.status, dup.body.code]).toEqual([409, 2]);

    const existOk = await api.post(`${ns('alpha')}/create`, { mode: 'exist_ok', properties: { owner: 'other' } });
    expect(existOk.status).toBe(200);
    expect(existOk.body.properties).toEqual({ owner: 'ralph' });

    await api.post(`${ns('alpha', 'child')}/create`, {});
    const overwrite = await api.post(`${ns('alpha')}/create`, { mode: 'OVERWRITE', properties: { owner: 'new' } });
    expect(overwrite.status).toBe(200);
    expect((await api.post(`${ns('alpha')}/describe`, {})).body.properties).toEqual({ owner: 'new' });
    expect((await api.get(`${ns('alpha')}/list`)).body.namespaces).toEqual([]);
  });

  it('needs the parent to exist', async () => {
    const res = await api.post(`${ns('missing', 'child')}/create`, {});
    expect([res.status, res.body.code]).toEqual([404, 1]);
  });

  it('lists direct children with inclusive limit and exclusive page tokens', async () => {
    await api.post(`${ns('paged')}/create`, {});
    for (const name of ['b', 'a', 'd', 'c', 'e']) expect((await api.post(`${ns('paged', name)}/create`, {})).status).toBe(200);
    await api.post(`${ns('paged', 'a', 'deep')}/create`, {});

    const all = await api.get(`${ns('paged')}/list`);
    expect(all.body).toEqual({ namespaces: ['a', 'b', 'c', 'd', 'e'], page_token: null });
    const first = await api.get(`${ns('paged')}/list?limit=2`);
    expect(first.body).toEqual({ namespaces: ['a', 'b'], page_token: 'b' });
    const second = await api.get(`${ns('paged')}/list?limit=2&page_token=b`);
    expect(second.body).toEqual({ namespaces: ['c', 'd'], page_token: 'd' });
    const last = await api.get(`${ns('paged')}/list?limit=2&page_token=d`);
    expect(last.body).toEqual({ namespaces: ['e'], page_token: null });
    const missing = await api.get(`${ns('nowhere')}/list`);
    expect([missing.status, missing.body.code]).toEqual([404, 1]);
  });

  it('rejects bad limits', async () => {
    for (const limit of ['-1', '0', 'abc', '1.5']) {
      const res = await api.get(`${ns()}/list?limit=${limit}`);
      expect([res.status, res.body.code]).toEqual([400, 13]);
    }
  });

  it('drops with Restrict and Cascade, Fail and Skip', async () => {
    await api.post(`${ns('dropme')}/create`, {});
    await api.post(`${ns('dropme', 'inner')}/create`, {});
    await api.post(`/v1/table/${Api.id(['dropme', 'inner', 't'])}/declare`, {});

    const restricted = await api.post(`${ns('dropme')}/drop`, { behavior: 'Restrict' });
    expect([restricted.status, restricted.body.code]).toEqual([409, 3]);
    expect((await api.post(`${ns('dropme', 'inner')}/exists`, {})).status).toBe(200);

    const cascade = await api.post(`${ns('dropme')}/drop`, { behavior: 'cascade' });
    expect(cascade.status).toBe(200);
    expect(Array.isArray(cascade.body.transaction_id)).toBe(true);
    expect((await api.post(`${ns('dropme')}/exists`, {})).status).toBe(404);
    expect((await api.post(`/v1/table/${Api.id(['dropme', 'inner', 't'])}/exists`, {})).status).toBe(404);

    const fail = await api.post(`${ns('dropme')}/drop`, {});
    expect([fail.status, fail.body.code]).toEqual([404, 1]);
    const skip = await api.post(`${ns('dropme')}/drop`, { mode: 'Skip' });
    expect(skip.status).toBe(200);
  });

  it('answers exists with 404 and a JSON error for a missing namespace', async () => {
    const res = await api.post(`${ns('ghost')}/exists`, {});
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 1 });
    expect(typeof res.body.error).toBe('string');
  });

  it('decodes + as a space and honours a custom delimiter', async () => {
    expect((await api.post(`/v1/namespace/with+space/create`, {})).status).toBe(200);
    expect((await api.get(`${ns()}/list`)).body.namespaces).toContain('with space');
    expect((await api.post(`/v1/namespace/plus%2Bsign/create`, {})).status).toBe(200);
    expect((await api.get(`${ns()}/list`)).body.namespaces).toContain('plus+sign');

    await api.post(`${ns('dotted')}/create`, {});
    const child = await api.post(`/v1/namespace/dotted.kid/create?delimiter=.`, { id: ['dotted', 'kid'] });
    expect(child.status).toBe(200);
    expect((await api.get(`/v1/namespace/dotted/list`)).body.namespaces).toEqual(['kid']);
  });

  it('refuses names holding the delimiter and bodies whose id differs from the path', async () => {
    const withDelimiter = await api.post(`/v1/namespace/a%24/create`, {});
    expect([withDelimiter.status, withDelimiter.body.code]).toEqual([400, 13]);
    const mismatch = await api.post(`${ns('x1')}/create`, { id: ['x2'] });
    expect([mismatch.status, mismatch.body.code]).toEqual([400, 13]);
    expect((await api.post(`${ns('x1')}/exists`, {})).status).toBe(404);
    expect((await api.post(`${ns('x2')}/exists`, {})).status).toBe(404);
  });

  it('answers malformed JSON and wrong types with code 13 and changes nothing', async () => {
    const malformed = await api.post(`${ns('bad')}/create`, '{"properties": ');
    expect([malformed.status, malformed.body.code]).toEqual([400, 13]);
    const wrongType = await api.post(`${ns('bad')}/create`, { properties: { a: 1 } });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, 13]);
    const badMode = await api.post(`${ns('bad')}/create`, { mode: 'sometimes' });
    expect([badMode.status, badMode.body.code]).toEqual([400, 13]);
    const arrayBody = await api.post(`${ns('bad')}/create`, [1, 2]);
    expect([arrayBody.status, arrayBody.body.code]).toEqual([400, 13]);
    expect((await api.post(`${ns('bad')}/exists`, {})).status).toBe(404);
  });

  it('keeps databases apart', async () => {
    const other = api.withHeaders({ 'x-lance-database': 'tenant2' });
    expect((await other.post(`${ns('only2')}/create`, {})).status).toBe(200);
    expect((await api.post(`${ns('only2')}/exists`, {})).status).toBe(404);
    const lancedbHeader = api.withHeaders({ 'x-lancedb-database': 'tenant2' });
    expect((await lancedbHeader.post(`${ns('only2')}/exists`, {})).status).toBe(200);
    const bad = await api.withHeaders({ 'x-lance-database': '../etc' }).post(`${ns()}/describe`, {});
    expect([bad.status, bad.body.code]).toEqual([400, 13]);
  });

  it('answers unknown routes with a JSON error', async () => {
    const res = await api.post('/v1/namespace/x/frobnicate', {});
    expect(res.body.code).toBe(0);
    expect(res.status).toBe(406);
  });
});
