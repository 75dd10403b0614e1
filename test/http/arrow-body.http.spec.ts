import * as arrow from 'apache-arrow';
import { request } from 'node:http';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

const MiB = 1024 * 1024;
const TABLES = 4;
/** Each table's rows have ids of their own: table i's start at i * SPAN. */
const SPAN = 1_000_000;

/** POSTs `body` without a Content-Length: chunked, in pieces of 64 KiB. */
function postChunked(url: string, body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...ARROW_STREAM, 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
    req.end();
  });
}

/**
 * Arrow bodies are read into buffers kept from one request to the next (apps/api/src/http/arrow-body-parser.ts).
 * A buffer given back while its operation could still read it would hand one request's rows to
 * another: the data plane here runs one operation of the database at a time, so concurrent
 * inserts wait in its queue holding their bodies while new bodies arrive.
 */
describe.each([
  ['in data-plane processes', '2'],
  ['in the API process', '0'],
])('Arrow bodies over HTTP, read into kept buffers, data plane %s', (_where, processes) => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { BODY_LIMIT: String(8 * MiB), DATA_PLANE_PROCESSES: processes } });
    api = new Api(server.url);
    await api.post('/v1/namespace/b/create', {});
    for (let i = 0; i < TABLES; i++) {
      const created = await api.send('POST', `/v1/table/b%24t${i}/create`, arrowStream(sampleTable(i * SPAN, 10, 64)), ARROW_STREAM);
      expect(created.status).toBe(200);
    }
  });
  afterAll(() => server?.stop());

  it('gives each of many concurrent inserts, with a length or chunked, its own rows, beside refused bodies', async () => {
    const expected = Array.from({ length: TABLES }, () => 10);
    for (let round = 0; round < 3; round++) {
      const inserts = Array.from({ length: TABLES }, async (_, i) => {
        // 300 to 600 rows of 64-d vectors: 100 to 200 KB (kept buffers from 64 KiB), sizes differing by table and round.
        const count = 300 + 100 * ((i + round) % 4);
        const rows = sampleTable(i * SPAN + expected[i], count, 64);
        // The last table's bodies are Arrow files: Lance reads those as they arrived.
        const body = i === TABLES - 1 ? Buffer.from(arrow.tableToIPC(rows, 'file')) : arrowStream(rows);
        const url = `/v1/table/b%24t${i}/insert`;
        const answer = (i + round) % 2 === 0 ? await postChunked(server.url + url, body) : await api.send<any>('POST', url, body, ARROW_STREAM);
        expect([answer.status, answer.body.num_inserted_rows]).toEqual([200, count]);
        expected[i] += count;
      });
      // Refused while the others wait: bytes that are not Arrow, and a chunked body past BODY_LIMIT.
      const garbage = api.send<any>('POST', `/v1/table/b%24t0/insert`, Buffer.alloc(300 * 1024, 7), ARROW_STREAM);
      const oversized = postChunked(`${server.url}/v1/table/b%24t1/insert`, Buffer.alloc(9 * MiB, 1));
      await Promise.all(inserts);
      expect([(await garbage).status, (await garbage).body.code]).toEqual([400, 13]);
      expect([(await oversized).status, (await oversized).body.code]).toEqual([413, 13]);
    }
    for (let i = 0; i < TABLES; i++) {
      const all = await api.post(`/v1/table/b%24t${i}/count_rows`, {});
      const own = await api.post(`/v1/table/b%24t${i}/count_rows`, { predicate: `id >= ${i * SPAN} AND id < ${i * SPAN + expected[i]}` });
      expect([all.body, own.body]).toEqual([expected[i], expected[i]]);
    }
  });

  it('keeps the rows of inserts whose callers leave while they wait or run apart from those of the bodies that follow', async () => {
    const base = await Promise.all(Array.from({ length: TABLES }, async (_, i) => (await api.post(`/v1/table/b%24t${i}/count_rows`, {})).body as number));
    const next = [...base];
    const sent: Array<{ table: number; from: number; count: number; status: number | 'left' }> = [];
    for (let round = 0; round < 2; round++) {
      const inserts = Array.from({ length: 16 }, async (_, k) => {
        const table = k % TABLES;
        const count = 400;
        const from = table * SPAN + next[table];
        next[table] += count;
        // Arriving one after another, so new bodies come in while earlier ones wait for the data plane.
        await new Promise((r) => setTimeout(r, k * 40));
        const leaves = ((k >> 2) + round) % 2 === 1;
        const signal = leaves ? AbortSignal.timeout((k * 97 + round * 53) % 400) : undefined;
        const sending = fetch(`${server.url}/v1/table/b%24t${table}/insert`, { method: 'POST', body: arrowStream(sampleTable(from, count, 64)), headers: ARROW_STREAM, signal });
        const status = await sending.then((r) => r.status, () => 'left' as const);
        sent.push({ table, from, count, status });
      });
      await Promise.all(inserts);
    }
    // A caller that left may still have had its rows written: then all of them, and nothing of anyone else's.
    for (const { table, from, count, status } of sent) {
      const own = (await api.post(`/v1/table/b%24t${table}/count_rows`, { predicate: `id >= ${from} AND id < ${from + count}` })).body;
      expect(status === 200 ? [own] : [own === 0 || own === count]).toEqual(status === 200 ? [count] : [true]);
    }
    for (let i = 0; i < TABLES; i++) {
      const all = await api.post(`/v1/table/b%24t${i}/count_rows`, {});
      const own = await api.post(`/v1/table/b%24t${i}/count_rows`, { predicate: `id >= ${i * SPAN} AND id < ${(i + 1) * SPAN}` });
      expect(all.body).toBe(own.body);
    }
  });

  it('refuses a declared length past BODY_LIMIT with 413 code 13, and serves the next body', async () => {
    const big = await api.send<any>('POST', `/v1/table/b%24t2/insert`, Buffer.alloc(9 * MiB, 1), ARROW_STREAM);
    expect([big.status, big.body.code]).toEqual([413, 13]);
    expect(big.headers.get('content-type')).toContain('application/json');
    const before = (await api.post(`/v1/table/b%24t2/count_rows`, {})).body as number;
    const next = await api.send<any>('POST', `/v1/table/b%24t2/insert`, arrowStream(sampleTable(2 * SPAN + before, 100, 64)), ARROW_STREAM);
    expect([next.status, next.body.num_inserted_rows]).toEqual([200, 100]);
    expect((await api.post(`/v1/table/b%24t2/count_rows`, {})).body).toBe(before + 100);
  });
});
