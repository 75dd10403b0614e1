import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

const query = { vector: { single_vector: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] }, k: 5, filter: 'id > 10', columns: { column_names: ['id'] } };

describe('query plans', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ env: { ANALYZE_TIMEOUT_MS: '20000' } });
    api = new Api(server.url);
    await api.send('POST', '/v1/table/p/create', arrowStream(sampleTable(0, 200)), ARROW_STREAM);
  });
  afterAll(() => server?.stop());

  it('explains a query plan as a bare JSON string, as the spec answers it', async () => {
    const res = await api.post('/v1/table/p/explain_plan', { query, verbose: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(typeof JSON.parse(res.text)).toBe('string');
    expect(JSON.parse(res.text)).toMatch(/KNN|Take|Projection|Filter|Scan/i);
    const bad = await api.post('/v1/table/p/explain_plan', { query: { ...query, filter: 'nope = 1' } });
    expect([bad.status, bad.body.code]).toEqual([404, 12]);
    const noQuery = await api.post('/v1/table/p/explain_plan', {});
    expect([noQuery.status, noQuery.body.code]).toEqual([400, 13]);
  });

  it('analyzes a query plan on a worker, as a bare JSON string with run-time metrics', async () => {
    const res = await api.post('/v1/table/p/analyze_plan', query);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(typeof JSON.parse(res.text)).toBe('string');
    expect(JSON.parse(res.text)).toMatch(/metrics|elapsed|output_rows/i);
    const bad = await api.post('/v1/table/p/analyze_plan', { ...query, version: 7 });
    expect([bad.status, bad.body.code]).toEqual([404, 11]);
    const badColumn = await api.post('/v1/table/p/analyze_plan', { ...query, columns: { column_names: ['ghost'] } });
    expect([badColumn.status, badColumn.body.code]).toEqual([404, 12]);
  });
});

describe('query analysis without a worker', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { ANALYZE_TIMEOUT_MS: '500' } });
    await new Api(server.url).send('POST', '/v1/table/p/create', arrowStream(sampleTable(0, 20)), ARROW_STREAM);
  });
  afterAll(() => server?.stop());

  it('answers 503 code 17 when no worker answers in time', async () => {
    const res = await new Api(server.url).post('/v1/table/p/analyze_plan', query);
    expect([res.status, res.body.code]).toEqual([503, 17]);
  });
});
