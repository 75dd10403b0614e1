import { connect } from 'node:net';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

/** Bad input of every kind gets a JSON error with the right code, and changes nothing. */
describe('error answers', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { BODY_LIMIT: '4096' } });
    api = new Api(server.url);
    await api.post('/v1/namespace/e/create', {});
    await api.post('/v1/table/e%24t/declare', {});
  });
  afterAll(() => server?.stop());

  const expectError = (res: { status: number; body: any; headers: Headers }, status: number, code: number) => {
    expect([res.status, res.body?.code]).toEqual([status, code]);
    expect(typeof res.body.error).toBe('string');
    expect(res.headers.get('content-type')).toContain('application/json');
  };

  it('refuses bad delimiters', async () => {
    expectError(await api.get('/v1/namespace/e/list?delimiter='), 400, 13);
    expectError(await api.get('/v1/namespace/e/list?delimiter=123456789'), 400, 13);
  });

  it('refuses bad query values', async () => {
    expectError(await api.post('/v1/table/e%24t/describe?check_declared=maybe', {}), 400, 13);
    expectError(await api.post('/v1/table/e%24t/version/list?descending=perhaps', null), 400, 13);
    expectError(await api.post('/v1/table/e%24t/version/list?page_token=abc', null), 400, 13);
    expectError(await api.get('/v1/namespace/e/table/list?limit=99999999999999999999'), 400, 13);
    expectError(await api.get('/v1/namespace/e/table/list?include_declared=sometimes'), 400, 13);
  });

  it('refuses malformed headers', async () => {
    expectError(await api.post('/v1/table/e%24t/describe', {}, { 'x-lancedb-min-timestamp': 'yesterday' }), 400, 13);
    const fine = await api.post('/v1/table/e%24t/describe', {}, { 'x-lancedb-min-timestamp': new Date().toISOString() });
    expect(fine.status).toBe(200);
  });

  it('refuses ids that cannot be decoded or that hold empty or control-character parts', async () => {
    expectError(await api.post('/v1/namespace/%E0%A4%A/create', {}), 400, 13);
    expectError(await api.post('/v1/namespace/a%24%24b/create', {}), 400, 13);
    expectError(await api.post('/v1/namespace/a%00b/create', {}), 400, 13);
    expectError(await api.post('/v1/namespace/a%0Ab/create', {}), 400, 13);
    expect((await api.get('/v1/namespace/%24/list')).body.namespaces).toEqual(['e']);
  });

  it('answers an oversized body with 413 and a JSON error', async () => {
    const res = await api.post('/v1/namespace/big/create', { properties: { blob: 'x'.repeat(10_000) } });
    expectError(res, 413, 13);
    expect((await api.post('/v1/namespace/big/exists', {})).status).toBe(404);
  });

  it('answers a wrong media type with a JSON error', async () => {
    const res = await api.send<{ code: number }>('POST', '/v1/namespace/m/create', 'hello', { 'content-type': 'text/plain' });
    expect(res.body.code).toBe(13);
    expect(res.status).toBe(415);
  });

  it('refuses wrong types everywhere a body is read', async () => {
    expectError(await api.post('/v1/table/e%24t/declare', { properties: 'x' }), 400, 13);
    expectError(await api.post('/v1/table/e%24t/rename', { new_table_name: 5 }), 400, 13);
    expectError(await api.post('/v1/table/e%24t/rename', { new_table_name: 'a$b' }), 400, 13);
    expectError(await api.post('/v1/table/e%24t/version/create', { version: 1.5, manifest_path: 'x' }), 400, 13);
    expectError(await api.post('/v1/table/e%24t/version/create', { version: 1, manifest_path: 'x', naming_scheme: 'V9' }), 400, 13);
    expectError(await api.post('/v1/table/version/batch-create', { entries: [{ version: 1, manifest_path: 'x' }] }), 400, 13);
    expectError(await api.post('/v1/table/batch-commit', { operations: [{}] }), 400, 13);
    // A transaction that does not exist is named first (404 code 10), then the body of one that does (400).
    expectError(await api.post('/v1/transaction/x/alter', { actions: [{ setStatusAction: {} }] }), 404, 10);
    const tx = (await api.post('/v1/table/e%24t/describe', {})).body.transaction_id ?? (await api.post('/v1/table/e%24u/declare', {})).body.transaction_id;
    expectError(await api.post(`/v1/transaction/${tx}/alter`, { actions: [{ setStatusAction: {} }] }), 400, 13);
    expectError(await api.post('/v1/table/e%24t/describe', { id: 'e$t' }), 400, 13);
    expectError(await api.post('/v1/table/e%24t/describe', { branch: 'dev' }), 404, 22);
  });

  it('serves no request whose target is not a path: the route matched would not be the path its ids are read from', async () => {
    // The router reads "*v1/namespace/e/describe" as "/v1/namespace/e/describe"; the id is read by
    // position in the raw target, where it is "describe". It is answered as a route that is not there.
    await api.post('/v1/namespace/describe/create', {});
    const { port } = new URL(server.url);
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write('POST *v1/namespace/e/describe HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'),
      );
      socket.on('data', (d) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const unknown = await api.post('/v1/no-such-route', {});
    expect(answer.split('\r\n')[0]).toBe(`HTTP/1.1 ${unknown.status} Not Acceptable`);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: unknown.body.code });
  });
});
