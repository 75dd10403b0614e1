import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';

/**
 * The server keeps managed tables open between requests. These check that what it serves is
 * always what the catalog says, whoever changed the table and however.
 */
const count = async (api: Api, table: string, predicate?: string) => {
  const res = await api.post(`/v1/table/${table}/count_rows`, predicate ? { predicate } : {});
  expect(res.status).toBe(200);
  return res.body as number;
};

const insert = (api: Api, table: string, from: number, rows: number) => api.send('POST', `/v1/table/${table}/insert`, arrowStream(sampleTable(from, rows)), ARROW_STREAM);

async function queryIds(api: Api, table: string, filter: string): Promise<number[]> {
  const res = await fetch(`${api.url}/v1/table/${table}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ k: 1000, filter, columns: { column_names: ['id'] } }),
  });
  expect(res.status).toBe(200);
  const rows = arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
  return rows.toArray().map((r) => r.id as number).sort((a, b) => a - b);
}

describe('the server’s open tables follow the catalog', () => {
  let server: RunningServer;
  let api: Api;
  let db: lancedb.Connection;

  beforeAll(async () => {
    // Room for two open tables only, so the tests below also evict and re-open.
    server = await startServer({ env: { TABLE_CACHE_SIZE: '2' } });
    api = new Api(server.url);
    db = await lancedb.connectNamespace('rest', { uri: server.url });
    await api.post('/v1/namespace/c/create', {});
  });
  afterAll(async () => {
    db?.close();
    await server?.stop();
  });

  it('sees a version the lancedb client committed through the catalog on the next count and query', async () => {
    expect((await api.send('POST', '/v1/table/c%24t/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
    expect(await count(api, 'c%24t')).toBe(10);
    const client = await db.openTable('t', ['c']);
    await client.add(sampleTable(100, 5));
    expect(await count(api, 'c%24t')).toBe(15);
    expect(await queryIds(api, 'c%24t', 'id >= 100')).toEqual([100, 101, 102, 103, 104]);
    await client.delete('id < 5');
    expect(await count(api, 'c%24t', 'id < 10')).toBe(5);
    // And the server's own write lands on top of the client's, not beside it.
    const written = await insert(api, 'c%24t', 200, 3);
    expect(written.body).toMatchObject({ version: (await client.version()) + 1 });
    await client.checkoutLatest();
    expect(await client.countRows()).toBe(13);
    client.close();
  });

  it('serves a dropped and re-created table of the same name from the new table', async () => {
    await api.send('POST', '/v1/table/c%24again/create', arrowStream(sampleTable(0, 7)), ARROW_STREAM);
    expect(await count(api, 'c%24again')).toBe(7);
    expect((await api.post('/v1/table/c%24again/drop', {})).status).toBe(200);
    expect((await api.post('/v1/table/c%24again/count_rows', {})).body.code).toBe(4);
    await db.createTable('again', sampleTable(500, 3), ['c']);
    expect(await count(api, 'c%24again')).toBe(3);
    expect(await queryIds(api, 'c%24again', 'id >= 0')).toEqual([500, 501, 502]);
    expect((await insert(api, 'c%24again', 600, 2)).body).toMatchObject({ version: 2 });
    expect(await count(api, 'c%24again')).toBe(5);
  });

  it('follows a rename and a restore', async () => {
    await api.send('POST', '/v1/table/c%24old/create', arrowStream(sampleTable(0, 4)), ARROW_STREAM);
    await insert(api, 'c%24old', 4, 4);
    expect(await count(api, 'c%24old')).toBe(8);
    expect((await api.post('/v1/table/c%24old/rename', { new_table_name: 'new' })).status).toBe(200);
    expect((await insert(api, 'c%24new', 8, 2)).status).toBe(200);
    expect(await count(api, 'c%24new')).toBe(10);
    expect((await api.post('/v1/table/c%24old/count_rows', {})).body.code).toBe(4);
    expect((await api.post('/v1/table/c%24new/restore', { version: 1 })).status).toBe(200);
    expect(await count(api, 'c%24new')).toBe(4);
    expect((await insert(api, 'c%24new', 100, 1)).status).toBe(200);
    expect(await queryIds(api, 'c%24new', 'id >= 0')).toEqual([0, 1, 2, 3, 100]);
  });

  it('lands every one of many concurrent inserts, each in its own version', async () => {
    await api.send('POST', '/v1/table/c%24busy/create', arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => insert(api, 'c%24busy', 1000 + i * 10, 10)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const versions = answers.map((a) => (a.body as { version: number }).version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: 24 }, (_, i) => i + 2));
    expect(await count(api, 'c%24busy')).toBe(241);
    // Reads racing writes never see less than what was acknowledged before they were sent.
    let acknowledged = 241;
    await Promise.all([
      (async () => {
        for (let i = 0; i < 10; i++) {
          expect((await insert(api, 'c%24busy', 5000 + i * 10, 10)).status).toBe(200);
          acknowledged += 10;
        }
      })(),
      (async () => {
        for (let i = 0; i < 30; i++) {
          const floor = acknowledged;
          expect(await count(api, 'c%24busy')).toBeGreaterThanOrEqual(floor);
        }
      })(),
    ]);
    expect(await count(api, 'c%24busy')).toBe(341);
  });
});

describe('two API processes sharing the store, each with its open tables', () => {
  const dataDir = tempDataDir();
  let a: RunningServer;
  let b: RunningServer;

  beforeAll(async () => {
    a = await startServer({ dataDir, entry: 'api' });
    b = await startServer({ dataDir, entry: 'api' });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('each sees the other’s writes on the next request', async () => {
    const apiA = new Api(a.url);
    const apiB = new Api(b.url);
    await apiA.post('/v1/namespace/s/create', {});
    await apiA.send('POST', '/v1/table/s%24t/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM);
    expect(await count(apiA, 's%24t')).toBe(10);
    expect(await count(apiB, 's%24t')).toBe(10);
    for (let i = 0; i < 6; i++) {
      const [writer, reader] = i % 2 ? [apiA, apiB] : [apiB, apiA];
      expect((await insert(writer, 's%24t', 100 + i * 5, 5)).status).toBe(200);
      expect(await count(reader, 's%24t')).toBe(15 + i * 5);
      expect(await count(writer, 's%24t')).toBe(15 + i * 5);
    }
  });

  it('loses no insert when both write the same table at once', async () => {
    const apiA = new Api(a.url);
    const apiB = new Api(b.url);
    const before = await count(apiA, 's%24t');
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => insert(i % 2 ? apiA : apiB, 's%24t', 10_000 + i * 3, 3)));
    // Lance retries a commit that lost the race for a version; a write that still cannot commit is refused, never half-done.
    for (const answer of answers) expect(answer.status === 200 || (answer.status === 409 && (answer.body as { code: number }).code === 14)).toBe(true);
    const landed = answers.filter((x) => x.status === 200);
    expect(landed.length).toBeGreaterThan(0);
    const versions = landed.map((x) => (x.body as { version: number }).version);
    expect(new Set(versions).size).toBe(versions.length);
    expect(await count(apiA, 's%24t')).toBe(before + 3 * landed.length);
    expect(await count(apiB, 's%24t')).toBe(before + 3 * landed.length);
  });
});
