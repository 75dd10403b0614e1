import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

/** The server's JSON log lines so far. */
function logLines(server: RunningServer): any[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/** Waits for a log line that satisfies `match`: access lines are written in batches, at most 100 ms apart. */
async function logLine(server: RunningServer, match: (line: any) => boolean): Promise<any> {
  for (let waited = 0; waited < 5_000; waited += 25) {
    const line = logLines(server).find(match);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no such log line within 5 s');
}

describe('operability', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
  });
  afterAll(() => server?.stop());

  it('answers /healthz and /readyz with each dependency checked', async () => {
    expect((await api.get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await api.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ event_store: 'ok', redis: 'ok', warehouse: 'ok' });
  });

  it('gives every request an id, keeps a caller’s, answers it and logs it in JSON', async () => {
    const generated = await api.post('/v1/namespace/ops/create', {});
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await api.post('/v1/namespace/ops/describe', {}, { 'x-request-id': 'trace-123' });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    await logLine(server, (l) => l.reqId === 'trace-123' && l.res?.statusCode === 200);
    const lines = logLines(server);
    expect(lines.every((l) => typeof l.level === 'number' && typeof l.time === 'number')).toBe(true);
  });

  it('with ACCESS_LOG=errors logs only the requests answered 400 or above', async () => {
    const quiet = await startServer({ entry: 'api', env: { ACCESS_LOG: 'errors' } });
    try {
      const own = new Api(quiet.url);
      expect((await own.post('/v1/namespace/fine/create', {}, { 'x-request-id': 'ok-1' })).status).toBe(200);
      const missing = await own.post('/v1/namespace/missing/describe', {}, { 'x-request-id': 'bad-1' });
      expect(missing.status).toBe(404);
      // Refusals carry the request id too.
      expect(missing.headers.get('x-request-id')).toBe('bad-1');
      await logLine(quiet, (l) => l.reqId === 'bad-1' && l.res?.statusCode === 404 && l.req?.url === '/v1/namespace/missing/describe');
      // Written in the same batch as bad-1, or earlier, had it been logged.
      expect(logLines(quiet).some((l) => l.reqId === 'ok-1')).toBe(false);
    } finally {
      await quiet.stop();
    }
  });

  it('exports Prometheus metrics per operation and status, with append latency, lag and queue depth', async () => {
    await api.post('/v1/namespace/ops/describe', {});
    await api.post('/v1/namespace/nope/describe', {});
    const text = (await api.get('/metrics')).text;
    expect(text).toMatch(/lance_catalog_http_requests_total\{operation="\/v1\/namespace\/:id\/describe",method="POST",status="200"\} \d+/);
    expect(text).toMatch(/lance_catalog_http_requests_total\{operation="\/v1\/namespace\/:id\/describe",method="POST",status="404"\} 1/);
    expect(text).toMatch(/lance_catalog_http_request_duration_seconds_bucket\{le="0.005",operation="\/v1\/namespace\/:id\/describe"/);
    expect(text).toMatch(/lance_catalog_event_store_append_duration_seconds_count\{outcome="appended"\} [1-9]/);
    expect(text).toMatch(/lance_catalog_queue_jobs\{queue="index-builds",state="waiting"\} \d+/);
  });

  it('sums the projection lag over databases unless METRICS_DATABASE_LABELS=true names each', async () => {
    expect((await api.get('/v1/namespace/%24/list', { 'x-lance-database': 'other' })).status).toBe(200);
    const text = (await api.get('/metrics')).text;
    expect(text).toMatch(/^lance_catalog_projection_lag_events 0$/m);
    expect(text).not.toMatch(/database=/);
    const labelled = await startServer({ entry: 'api', env: { METRICS_DATABASE_LABELS: 'true' } });
    try {
      const own = new Api(labelled.url);
      expect((await own.get('/v1/namespace/%24/list', { 'x-lance-database': 'other' })).status).toBe(200);
      expect((await own.get('/v1/namespace/%24/list')).status).toBe(200);
      const named = (await own.get('/metrics')).text;
      expect(named).toMatch(/^lance_catalog_projection_lag_events\{database="default"\} 0$/m);
      expect(named).toMatch(/^lance_catalog_projection_lag_events\{database="other"\} 0$/m);
      // Names made up by requests come and go with the projections held: the series do not pile up.
      for (const round of [1, 2]) {
        for (let i = 0; i < 300; i += 50) {
          await Promise.all(Array.from({ length: 50 }, (_, j) => own.get('/v1/namespace/%24/list', { 'x-lance-database': `made-up-${round}-${i + j}` })));
        }
        const series = (await own.get('/metrics')).text.match(/^lance_catalog_projection_lag_events\{database=/gm) ?? [];
        expect(series.length).toBeLessThanOrEqual(260);
      }
    } finally {
      await labelled.stop();
    }
  });

  it('finishes in-flight requests on SIGTERM, then exits', async () => {
    const own = await startServer({ entry: 'api' });
    const ownApi = new Api(own.url);
    const pending = ownApi.send('POST', '/v1/table/slow/create', arrowStream(sampleTable(0, 50_000)), ARROW_STREAM);
    // Long enough for the request to have reached the server, well short of its completion.
    await new Promise((r) => setTimeout(r, 100));
    own.process.kill('SIGTERM');
    const res = await pending;
    expect(res.status).toBe(200);
    const code = await new Promise<number | null>((r) => (own.process.exitCode !== null ? r(own.process.exitCode) : own.process.once('exit', (c) => r(c))));
    expect(code).toBe(0);
  });
});

describe('without Redis', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    api = new Api(server.url);
  });
  afterAll(() => server?.stop());

  it('keeps the catalog working, answers queue operations 503 code 17 with Retry-After, and is not ready', async () => {
    expect((await api.post('/v1/namespace/r/create', {})).status).toBe(200);
    expect((await api.send('POST', '/v1/table/r%24t/create', arrowStream(sampleTable(0, 20)), ARROW_STREAM)).status).toBe(200);
    const build = await api.post('/v1/table/r%24t/create_index', { column: 'id', index_type: 'BTREE' });
    expect([build.status, build.body.code]).toEqual([503, 17]);
    expect(build.headers.get('retry-after')).toBe('5');
    expect((await api.post('/v1/table/r%24t/index/list', {})).body.indexes).toEqual([]);
    const ready = await api.get('/readyz');
    expect([ready.status, ready.body.code]).toEqual([503, 17]);
    expect(ready.body.error).toContain('redis');
  });
});
