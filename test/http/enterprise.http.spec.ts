import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

describe('enterprise extension routes', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ entry: 'api' });
    api = new Api(server.url, { 'x-api-key': 'key-1' });
  });
  afterAll(() => server?.stop());

  it('creates a table from an Arrow stream and lists it', async () => {
    const created = await api.send('POST', '/v1/tables/orders', arrowStream(sampleTable(0, 10)), ARROW_STREAM);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ version: 1 });
    expect(typeof (created.body as any).location).toBe('string');
    const again = await api.send('POST', '/v1/tables/orders', arrowStream(sampleTable(0, 10)), ARROW_STREAM);
    expect([again.status, (again.body as any).code]).toEqual([409, 5]);
    const listed = await api.get('/v1/tables');
    expect(listed.body).toEqual({ tables: ['orders'], page_token: null });
    expect((await api.post('/v1/table/orders/count_rows', {})).body).toBe(10);
  });

  it('needs an x-api-key', async () => {
    const anonymous = new Api(server.url);
    const res = await anonymous.get('/v1/tables');
    expect([res.status, res.body.code]).toEqual([401, 16]);
    const create = await anonymous.send('POST', '/v1/tables/x', arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    expect((create.body as any).code).toBe(16);
    expect((await api.get('/v1/tables')).body.tables).toEqual(['orders']);
  });
});
