import * as arrow from 'apache-arrow';
import { readdirSync, readFileSync } from 'node:fs';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

/** The environment of each running data-plane process of the server (its children running data-plane-process.js). */
function dataPlaneEnvironments(serverPid: number): Array<Record<string, string>> {
  const children = readdirSync('/proc').filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(serverPid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('data-plane-process.js');
    } catch {
      return false; // gone meanwhile
    }
  });
  return children.map((pid) => Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])));
}

/** What no answer may carry: Lance's source paths, its chains of causes, the server's own directories. */
function expectNoInternals(text: string, dataDir: string): void {
  expect(text).not.toMatch(/\.rs:\d+/);
  expect(text).not.toMatch(/Caused by/i);
  expect(text).not.toContain(dataDir);
  expect(text).not.toContain('/usr/local/cargo');
}

describe('a crash or a runaway allocation inside Lance costs one request, not the catalog', () => {
  let server: RunningServer;
  let api: Api;
  const MEMORY_MB = 400;

  beforeAll(async () => {
    server = await startServer({
      env: {
        DATA_PLANE_MEMORY_MB: String(MEMORY_MB),
        // The input limits refuse these requests before Lance sees them; here they must reach
        // Lance, to show what contains them when a limit lets one through.
        SQL_EXPRESSION_MAX_TERMS: '1000000',
        SQL_EXPRESSION_MAX_BYTES: '4194304',
        SQL_EXPRESSION_MAX_REPEAT: '1000000000',
      },
    });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/c/create', {})).status).toBe(200);
    const words = new arrow.Table({
      id: arrow.vectorFromArray(Int32Array.from({ length: 2000 }, (_, i) => i)),
      x: arrow.vectorFromArray(Array.from({ length: 2000 }, () => 'ab'), new arrow.Utf8()),
    });
    expect((await api.send('POST', `/v1/table/${Api.id(['c', 'words'])}/create`, arrowStream(words), ARROW_STREAM)).status).toBe(200);
    expect((await api.send('POST', `/v1/table/${Api.id(['c', 'items'])}/create`, arrowStream(sampleTable(0, 100)), ARROW_STREAM)).status).toBe(200);
  });

  afterAll(async () => {
    await server?.stop();
  });

  const crashes = () => api.post(`/v1/table/${Api.id(['c', 'items'])}/count_rows`, { predicate: Array(50_000).fill('id > 1').join(' AND ') });

  test('a request that crashes Lance answers 500 code 18 with its request id; catalog calls answer meanwhile; the next count works', async () => {
    const crash = crashes();
    const catalog: Array<Promise<number>> = [];
    for (let i = 0; i < 20; i++) {
      catalog.push(api.post(`/v1/table/${Api.id(['c', 'items'])}/describe`, {}).then((r) => r.status));
      catalog.push(api.get(`/v1/namespace/c/table/list`).then((r) => r.status));
      catalog.push(api.post(`/v1/namespace/${Api.id([`n${i}`])}/create`, {}).then((r) => r.status));
    }
    const crashed = await crash;
    expect(crashed.status).toBe(500);
    expect(crashed.body.code).toBe(18);
    expect(crashed.body.detail).toBe(`request id ${crashed.headers.get('x-request-id')}`);
    expectNoInternals(crashed.text, server.dataDir);
    expect(await Promise.all(catalog)).toEqual(Array(60).fill(200));

    expect(server.process.exitCode).toBeNull();
    const count = await api.post(`/v1/table/${Api.id(['c', 'items'])}/count_rows`, { predicate: 'id >= 50' });
    expect(count.status).toBe(200);
    expect(Number(count.text)).toBe(50);
    const metrics = await api.get('/metrics');
    expect(metrics.text).toMatch(/lance_catalog_data_plane_process_ends_total\{reason="crashed"\} 1/);
    const ended = /data-plane process \d+ ended \(SIGSEGV\)/;
    expect(await server.outputMatching(ended)).toMatch(ended);
  });

  test('a query that needs more memory than DATA_PLANE_MEMORY_MB is refused with 400 code 13; the next query works', async () => {
    const hog = await api.post(`/v1/table/${Api.id(['c', 'words'])}/count_rows`, { predicate: 'length(repeat(x, 2500000)) > 0' });
    expect(hog.status).toBe(400);
    expect(hog.body.code).toBe(13);
    expect(hog.body.error).toContain('DATA_PLANE_MEMORY_MB');
    expectNoInternals(hog.text, server.dataDir);
    const capped = new RegExp(`passed its memory cap \\(\\d+ MB resident, cap ${MEMORY_MB} MB\\)`);
    expect(await server.outputMatching(capped)).toMatch(capped);
    const after = await api.post(`/v1/table/${Api.id(['c', 'words'])}/count_rows`, { predicate: "x = 'ab'" });
    expect(after.status).toBe(200);
    expect(Number(after.text)).toBe(2000);
  });

  test('a crash during a write loses nothing acknowledged and records nothing for it', async () => {
    const before = await api.post(`/v1/table/${Api.id(['c', 'items'])}/version/list`, {});
    const crash = api.post(`/v1/table/${Api.id(['c', 'items'])}/delete`, { predicate: Array(50_000).fill('id > 1').join(' AND ') });
    const insert = api.send('POST', `/v1/table/${Api.id(['c', 'items'])}/insert`, arrowStream(sampleTable(100, 10)), ARROW_STREAM);
    expect((await crash).status).toBe(500);
    expect((await insert).status).toBe(200);
    const after = await api.post(`/v1/table/${Api.id(['c', 'items'])}/version/list`, {});
    expect(after.body.versions.length).toBe(before.body.versions.length + 1);
    expect(Number((await api.post(`/v1/table/${Api.id(['c', 'items'])}/count_rows`, {})).text)).toBe(110);
  });

  test("Lance's refusals answer in the catalog's words, without its source paths or the server's directories", async () => {
    const id = Api.id(['c', 'items']);
    const answers = [
      await api.post(`/v1/table/${id}/count_rows`, { predicate: 'nope > 1' }),
      await api.post(`/v1/table/${id}/count_rows`, { predicate: "id > 'abc'" }),
      await api.post(`/v1/table/${id}/query`, { k: 3, filter: 'frob(id) > 1' }),
      await api.post(`/v1/table/${id}/query`, { k: 3, vector: [1, 2, 3] }),
      await api.post(`/v1/table/${id}/update`, { updates: [['id', 'nope + 1']] }),
      await api.send('POST', `/v1/table/${id}/insert`, arrowStream(new arrow.Table({ q: arrow.vectorFromArray([1, 2]) })), ARROW_STREAM),
    ];
    for (const a of answers) {
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expectNoInternals(a.text, server.dataDir);
    }
    expect(answers[0].body.error).toContain("no column named 'nope'");
    expect(answers[2].body.error).toContain("no SQL function named 'frob'");
  });

  test("data-plane processes keep freed memory for the next operation (glibc's thresholds), a quarter of DATA_PLANE_MEMORY_MB at most", async () => {
    expect((await api.post(`/v1/table/${Api.id(['c', 'items'])}/count_rows`, {})).status).toBe(200);
    const environments = dataPlaneEnvironments(server.process.pid!);
    expect(environments.length).toBeGreaterThan(0);
    for (const env of environments) {
      expect([env.MALLOC_MMAP_THRESHOLD_, env.MALLOC_TRIM_THRESHOLD_]).toEqual([String(32 * 1024 * 1024), String((MEMORY_MB / 4) * 1024 * 1024)]);
    }
  });
});
