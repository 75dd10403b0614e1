import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const ARROW_STREAM = { 'content-type': 'application/vnd.apache.arrow.stream' };

function rows(from: number, count: number) {
  const values = Float32Array.from({ length: count * 4 }, (_, i) => Math.sin(from * 4 + i));
  const type = new arrow.FixedSizeList(4, new arrow.Field('item', new arrow.Float32(), true));
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: count }, (_, i) => from + i)),
    vector: arrow.makeVector(arrow.makeData({ type, length: count, child: arrow.makeData({ type: new arrow.Float32(), length: count * 4, data: values }) })),
  });
}
const ipc = (t: arrow.Table) => Buffer.from(arrow.tableToIPC(t, 'stream'));

/** How many appends reached the server's event store so far (its Prometheus counter). */
async function appends(api: Api): Promise<number> {
  const text = (await api.get('/metrics')).text;
  return Number(/lance_catalog_event_store_append_duration_seconds_count\{outcome="appended"\} (\d+)/.exec(text)?.[1] ?? 0);
}

interface HistoryEvent {
  type: string;
  transaction_id: string;
  operation: string;
  context: Record<string, string>;
  data: { version?: number; rows?: number; operation?: string };
}
const history = async (api: Api, table: string): Promise<HistoryEvent[]> => (await api.get(`/v1/history/table/${table}`)).body.events;

async function insert(api: Api, table: string, data: arrow.Table, mode = '') {
  const res = await api.send<any>('POST', `/v1/table/${table}/insert${mode ? `?mode=${mode}` : ''}`, ipc(data), ARROW_STREAM);
  return res;
}

describe('a server-side write and its commit in one append', () => {
  const dataDir = tempDataDir();
  let a: RunningServer;
  let b: RunningServer;
  let apiA: Api;
  let apiB: Api;

  beforeAll(async () => {
    a = await startServer({ dataDir, entry: 'api' });
    b = await startServer({ dataDir, entry: 'api' });
    apiA = new Api(a.url);
    apiB = new Api(b.url);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('records an insert, an overwrite and a CreateTable with one durable write for commit and change', async () => {
    let before = await appends(apiA);
    const created = await apiA.send<any>('POST', '/v1/table/one/create', ipc(rows(0, 100)), ARROW_STREAM);
    expect(created.status).toBe(200);
    // The declaration, then the first commit carrying its data change.
    expect((await appends(apiA)) - before).toBe(2);

    for (const [mode, operation] of [['', 'Insert'], ['overwrite', 'Overwrite'], ['', 'Insert']]) {
      before = await appends(apiA);
      const res = await insert(apiA, 'one', rows(1000, 50), mode);
      expect(res.status).toBe(200);
      expect((await appends(apiA)) - before).toBe(1);
      const [commit, change] = (await history(apiA, 'one')).slice(-2);
      expect(commit).toMatchObject({ type: 'TableVersionCreated', operation: 'CreateTableVersion', context: { origin: 'catalog-server' }, data: { version: res.body.version } });
      expect(change).toMatchObject({
        type: 'TableDataChanged',
        operation: `${operation}Table`,
        transaction_id: res.body.transaction_id,
        data: { operation, version: res.body.version, rows: 50 },
      });
      expect(change.transaction_id).not.toBe(commit.transaction_id);
      const tx = await apiA.post(`/v1/transaction/${res.body.transaction_id}/describe`, {});
      expect(tx.body).toMatchObject({ status: 'Succeeded', properties: { operation: `${operation}Table` } });
    }

    before = await appends(apiA);
    const replaced = await apiA.send<any>('POST', '/v1/table/one/create?mode=overwrite', ipc(rows(0, 7)), ARROW_STREAM);
    expect((await appends(apiA)) - before).toBe(1);
    expect((await history(apiA, 'one')).slice(-1)[0]).toMatchObject({
      type: 'TableDataChanged',
      transaction_id: replaced.body.transaction_id,
      data: { operation: 'Overwrite', version: replaced.body.version, rows: 7 },
    });
    expect((await apiA.post('/v1/table/one/count_rows', {})).body).toBe(7);
  });

  it('leaves nothing behind when the write fails before committing, and the next write still rides on its commit', async () => {
    const events = (await history(apiA, 'one')).length;
    const before = await appends(apiA);
    const wrong = await apiA.send<any>('POST', '/v1/table/one/insert', ipc(arrow.tableFromArrays({ other: Float64Array.from([1]) })), ARROW_STREAM);
    expect([wrong.status, wrong.body.code]).toEqual([400, 20]);
    const garbage = await apiA.send<any>('POST', '/v1/table/one/insert', Buffer.from('not arrow at all'), ARROW_STREAM);
    expect([garbage.status, garbage.body.code]).toEqual([400, 13]);
    expect(await appends(apiA)).toBe(before);
    expect(await history(apiA, 'one')).toHaveLength(events);

    const ok = await insert(apiA, 'one', rows(7, 3));
    expect(ok.status).toBe(200);
    expect((await appends(apiA)) - before).toBe(1);
    expect((await history(apiA, 'one')).slice(-1)[0]).toMatchObject({ transaction_id: ok.body.transaction_id, data: { version: ok.body.version, rows: 3 } });
  });

  it('records the change on its own when the commit reaches another process, as a worker’s do', async () => {
    // A process whose own Lance client commits through A (SELF_URL), as a worker reaches its CATALOG_URL.
    const c = await startServer({ dataDir, entry: 'api', env: { SELF_URL: a.url } });
    try {
      const apiC = new Api(c.url);
      await insert(apiA, 'one', rows(10, 1));
      const [beforeA, beforeC] = [await appends(apiA), await appends(apiC)];
      const res = await insert(apiC, 'one', rows(20, 4));
      expect(res.status).toBe(200);
      // A appended the commit alone, C the change alone.
      expect([(await appends(apiA)) - beforeA, (await appends(apiC)) - beforeC]).toEqual([1, 1]);
      const [commit, change] = (await history(apiA, 'one')).slice(-2);
      expect(commit).toMatchObject({ type: 'TableVersionCreated', data: { version: res.body.version } });
      expect(change).toMatchObject({ type: 'TableDataChanged', transaction_id: res.body.transaction_id, data: { operation: 'Insert', version: res.body.version, rows: 4 } });
    } finally {
      await c.stop();
    }
  });

  it('records each of many concurrent inserts from two processes once, on the version it wrote, retried commits included', async () => {
    await apiA.send('POST', '/v1/table/busy/create', ipc(rows(0, 1)), ARROW_STREAM);
    await apiA.send('POST', '/v1/table/calm/create', ipc(rows(0, 1)), ARROW_STREAM);
    // Waves of concurrent inserts until Lance has had to retry a commit refused with 409 at least once.
    const conflicts = () => [a.output(), b.output()].join('').split('\n').filter((l) => l.includes('version/create') && l.includes('"statusCode":409')).length;
    const answers: Array<{ status: number; body: any }> = [];
    for (let wave = 0; wave < 5 && (wave === 0 || conflicts() === 0); wave++) {
      const writes = Array.from({ length: 24 }, (_, i) => insert(i % 2 ? apiA : apiB, i % 3 ? 'busy' : 'calm', rows(1000 * wave + 100 + i * 10, 10)));
      answers.push(...(await Promise.all(writes)));
    }
    expect(conflicts()).toBeGreaterThan(0);
    const ok = answers.filter((r) => r.status === 200).map((r) => r.body as { transaction_id: string; version: number });
    // Lance resolves a lost version race by committing the next version; it may give up (code 14) against many writers.
    for (const r of answers.filter((x) => x.status !== 200)) expect(r.body.code).toBe(14);
    expect(ok.length).toBeGreaterThan(answers.length / 2);

    for (const table of ['busy', 'calm']) {
      const events = await history(apiA, table);
      const changes = events.filter((e) => e.type === 'TableDataChanged' && e.data.operation === 'Insert');
      const commits = new Set(events.filter((e) => e.type === 'TableVersionCreated').map((e) => e.data.version));
      const versions = changes.map((e) => e.data.version!);
      expect(new Set(versions).size).toBe(versions.length);
      for (const v of versions) expect(commits.has(v)).toBe(true);
      const mine = ok.filter((r) => changes.some((e) => e.transaction_id === r.transaction_id));
      for (const r of mine) expect(changes.find((e) => e.transaction_id === r.transaction_id)!.data.version).toBe(r.version);
      expect((await apiA.post(`/v1/table/${table}/count_rows`, {})).body).toBe(1 + 10 * changes.length);
    }
    const recorded = [...(await history(apiA, 'busy')), ...(await history(apiA, 'calm'))].filter((e) => e.type === 'TableDataChanged' && e.data.operation === 'Insert');
    expect(recorded.map((e) => e.transaction_id).sort()).toEqual(ok.map((r) => r.transaction_id).sort());
  });
});
