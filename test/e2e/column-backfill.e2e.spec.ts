import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { freePort } from '../support/nginx';
import { RunningServer, startServer, tempDataDir } from '../support/server';

/** Computed columns (AddColumns `computed`) and AlterTableBackfillColumns as a worker job followed through its transaction. */
describe('computed columns and their backfill', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    await api.post('/v1/namespace/bf/create', {});
    expect((await api.send('POST', '/v1/table/bf%24t/create', arrowStream(sampleTable(0, 50)), ARROW_STREAM)).status).toBe(200);
  }, 60_000);
  afterAll(() => server?.stop());

  async function column(table: string, name: string): Promise<Array<number | null>> {
    const res = await fetch(`${server.url}/v1/table/${table}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filter: 'id >= 0', k: 1000, columns: { column_names: ['id', name] } }),
    });
    const t = arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    const ids = t.getChild('id')!.toArray() as Int32Array;
    const values = t.getChild(name)!;
    return [...ids].map((id, i) => [id, values.get(i) as number | null] as const).sort((a, b) => a[0] - b[0]).map(([, v]) => v);
  }

  const settle = (job: string) =>
    waitFor(() => api.post(`/v1/transaction/${job}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000);

  it('declares a computed column empty and fills it with a followable job, then fills only the rows appended since', async () => {
    const added = await api.post('/v1/table/bf%24t/add_columns', { new_columns: [{ name: 'doubled', computed: 'id * 2' }] });
    expect(added.status).toBe(200);
    expect((await column('bf%24t', 'doubled')).every((v) => v === null)).toBe(true);

    const requested = await api.post('/v1/table/bf%24t/backfill_column', { column: 'doubled' });
    expect(requested.status).toBe(202);
    const done = await settle(requested.body.job_id);
    expect(done.body).toMatchObject({
      status: 'Succeeded',
      properties: { operation: 'AlterTableBackfillColumns', column: 'doubled', rows_filled: '50', table_version: expect.any(String), attempt: '1' },
    });
    expect(await column('bf%24t', 'doubled')).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));

    await api.send('POST', '/v1/table/bf%24t/insert', arrowStream(sampleTable(50, 5)), ARROW_STREAM);
    expect((await column('bf%24t', 'doubled')).slice(50)).toEqual([null, null, null, null, null]);
    const again = await settle((await api.post('/v1/table/bf%24t/backfill_column', { column: 'doubled' })).body.job_id);
    expect(again.body.properties.rows_filled).toBe('5');
    expect(await column('bf%24t', 'doubled')).toEqual(Array.from({ length: 55 }, (_, i) => i * 2));

    const history = (await api.get('/v1/history/table/bf%24t')).body.events.map((e: { type: string }) => e.type);
    expect(history.filter((t: string) => t === 'TableBackfillRequested')).toHaveLength(2);
  }, 120_000);

  /** Every row of a table (on a branch) by id, with the columns asked for. */
  async function rows(table: string, names: string[], branch?: string): Promise<Array<Record<string, unknown>>> {
    const res = await fetch(`${server.url}/v1/table/${table}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filter: 'id >= 0', k: 1000, columns: { column_names: ['id', ...names] }, ...(branch ? { branch } : {}) }),
    });
    expect(res.status).toBe(200);
    const t = arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    return t
      .toArray()
      .map((r) => r.toJSON() as Record<string, unknown>)
      .sort((a, b) => (a.id as number) - (b.id as number));
  }
  const count = async (table: string, body: Record<string, unknown> = {}) => (await api.post(`/v1/table/${table}/count_rows`, body)).body as number;
  const fields = async (table: string, branch?: string) =>
    (await api.post(`/v1/table/${table}/describe`, { load_detailed_metadata: true, ...(branch ? { branch } : {}) })).body.schema.fields as Array<{ name: string; nullable: boolean }>;
  const words = ['apple', 'banana', 'cherry', 'damson', 'elder'];

  it('fills exactly the live rows of a table a client deleted from and updated, leaving deleted rows gone and the other columns as they were', async () => {
    expect((await api.send('POST', '/v1/table/bf%24mut/create', arrowStream(sampleTable(0, 60)), ARROW_STREAM)).status).toBe(200);
    const before = await fields('bf%24mut');
    expect(before.find((f) => f.name === 'id')!.nullable).toBe(false);
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    try {
      // Deleted rows, rows an update moved (Lance deletes them where they were), and one row whose input changed.
      const client = await db.openTable('mut', ['bf']);
      expect((await client.delete('id % 10 = 3')).numDeletedRows).toBe(6);
      expect((await client.update({ where: 'id >= 50', values: { text: 'updated' } })).rowsUpdated).toBe(9);
      expect((await client.update({ where: 'id = 41', valuesSql: { id: '1041' } })).rowsUpdated).toBe(1);
      client.close();

      const live = Array.from({ length: 60 }, (_, i) => i)
        .filter((i) => i % 10 !== 3)
        .map((i) => (i === 41 ? 1041 : i))
        .sort((a, b) => a - b);
      const textOf = (id: number) => (id >= 50 && id < 60 ? 'updated' : `${words[(id % 1000) % 5]} pie number ${id % 1000}`);

      expect((await api.post('/v1/table/bf%24mut/add_columns', { new_columns: [{ name: 'doubled', computed: 'id * 2' }] })).status).toBe(200);
      const requested = await api.post('/v1/table/bf%24mut/backfill_column', { column: 'doubled' });
      expect(requested.status).toBe(202);
      const done = await settle(requested.body.job_id);
      expect(done.body).toMatchObject({ status: 'Succeeded', properties: { rows_filled: String(live.length) } });
      expect(done.body.properties.inputs_left_nullable).toBeUndefined();

      const filled = await rows('bf%24mut', ['doubled', 'text']);
      expect(filled.map((r) => r.id)).toEqual(live);
      expect(filled).toEqual(live.map((id) => ({ id, doubled: id * 2, text: textOf(id) })));
      expect(await count('bf%24mut')).toBe(live.length);
      expect(await count('bf%24mut', { predicate: 'doubled IS NULL' })).toBe(0);
      expect(await count('bf%24mut', { predicate: 'id % 10 = 3' })).toBe(0);
      // The other columns are declared as they were (the input `id` non-nullable still).
      expect((await fields('bf%24mut')).filter((f) => f.name !== 'doubled')).toEqual(before);

      // Rows appended since, and a filled row deleted: the next backfill fills the new rows only.
      await api.send('POST', '/v1/table/bf%24mut/insert', arrowStream(sampleTable(100, 5)), ARROW_STREAM);
      expect((await api.post('/v1/table/bf%24mut/delete', { predicate: 'id = 1' })).body.num_deleted_rows).toBe(1);
      const again = await settle((await api.post('/v1/table/bf%24mut/backfill_column', { column: 'doubled' })).body.job_id);
      expect(again.body).toMatchObject({ status: 'Succeeded', properties: { rows_filled: '5' } });
      const appended = [...live.filter((id) => id !== 1), 100, 101, 102, 103, 104].sort((a, b) => a - b);
      expect((await rows('bf%24mut', ['doubled'])).map((r) => [r.id, r.doubled])).toEqual(appended.map((id) => [id, id * 2]));
      expect((await fields('bf%24mut')).filter((f) => f.name !== 'doubled')).toEqual(before);

      // Filled rows compacted into one fragment with rows not filled yet: the next backfill fills those.
      await api.send('POST', '/v1/table/bf%24mut/insert', arrowStream(sampleTable(200, 3)), ARROW_STREAM);
      expect((await settle((await api.post('/v1/table/bf%24mut/maintenance/compact', {})).body.job_id)).body.status).toBe('Succeeded');
      const third = await settle((await api.post('/v1/table/bf%24mut/backfill_column', { column: 'doubled' })).body.job_id);
      expect(third.body).toMatchObject({ status: 'Succeeded', properties: { rows_filled: '3' } });
      const now = [...appended, 200, 201, 202].sort((a, b) => a - b);
      expect((await rows('bf%24mut', ['doubled'])).map((r) => [r.id, r.doubled])).toEqual(now.map((id) => [id, id * 2]));
      expect((await fields('bf%24mut')).filter((f) => f.name !== 'doubled')).toEqual(before);

      // The client reads the same table: the live rows, each with its value, and `id` non-nullable.
      const reopened = await db.openTable('mut', ['bf']);
      expect(await reopened.countRows()).toBe(now.length);
      expect(await reopened.countRows('doubled = id * 2')).toBe(now.length);
      expect((await reopened.schema()).fields.find((f) => f.name === 'id')!.nullable).toBe(false);
      reopened.close();
    } finally {
      db.close();
    }
  }, 120_000);

  it('fills exactly the live rows on a branch deleted from and updated, leaving main as it was', async () => {
    const T = 'bf%24brm';
    expect((await api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, 30)), ARROW_STREAM)).status).toBe(200);
    expect((await api.post(`/v1/table/${T}/branches/create`, { name: 'dev' })).status).toBe(200);
    const before = await fields(T, 'dev');
    expect((await api.post(`/v1/table/${T}/delete`, { branch: 'dev', predicate: 'id < 5' })).body.num_deleted_rows).toBe(5);
    expect((await api.post(`/v1/table/${T}/update`, { branch: 'dev', predicate: 'id >= 25', updates: [['text', "'on dev'"]] })).body.updated_rows).toBe(5);
    expect((await api.post(`/v1/table/${T}/add_columns`, { branch: 'dev', new_columns: [{ name: 'doubled', computed: 'id * 2' }] })).status).toBe(200);

    const requested = await api.post(`/v1/table/${T}/backfill_column`, { column: 'doubled', branch: 'dev' });
    expect(requested.status).toBe(202);
    expect((await settle(requested.body.job_id)).body).toMatchObject({ status: 'Succeeded', properties: { rows_filled: '25', branch: 'dev' } });
    const live = Array.from({ length: 25 }, (_, i) => i + 5);
    expect(await rows(T, ['doubled', 'text'], 'dev')).toEqual(live.map((id) => ({ id, doubled: id * 2, text: id >= 25 ? 'on dev' : `${words[id % 5]} pie number ${id}` })));
    expect(await count(T, { branch: 'dev' })).toBe(25);
    expect(await count(T, { branch: 'dev', predicate: 'id < 5' })).toBe(0);
    expect((await fields(T, 'dev')).filter((f) => f.name !== 'doubled')).toEqual(before);

    // Main: its rows, its columns.
    expect(await count(T)).toBe(30);
    expect((await fields(T)).map((f) => f.name)).not.toContain('doubled');
    expect((await fields(T))).toEqual(before);
  }, 120_000);

  it('refuses what it cannot do with the spec\'s codes, recording nothing', async () => {
    const refusals = [
      [await api.post('/v1/table/bf%24t/backfill_column', { column: 'nope' }), 404, 12],
      [await api.post('/v1/table/bf%24t/backfill_column', { column: 'text' }), 400, 13],
      [await api.post('/v1/table/bf%24t/backfill_column', {}), 400, 13],
      [await api.post('/v1/table/bf%24t/backfill_column', { column: 'doubled', where: 'id > 3' }), 406, 0],
      [await api.post('/v1/table/bf%24t/backfill_column', { column: 'doubled', read_version: 1 }), 406, 0],
      [await api.post('/v1/table/bf%24t/backfill_column', { column: 'doubled', where: 'id > 3; drop' }), 400, 13],
      [await api.post('/v1/table/bf%24nowhere/backfill_column', { column: 'doubled' }), 404, 4],
      [await api.post('/v1/table/bf%24t/add_columns', { new_columns: [{ name: 'a', computed: 'id + 1' }, { name: 'b', expression: 'id + 2' }] }), 400, 13],
    ] as const;
    for (const [res, status, code] of refusals) expect({ status: res.status, code: res.body.code }).toEqual({ status, code });
    expect(refusals[1][0].body.error).toContain('not a computed column');
    expect(refusals[3][0].body.error).toContain('where');
    const history = (await api.get('/v1/history/table/bf%24t')).body.events.map((e: { type: string }) => e.type);
    expect(history.filter((t: string) => t === 'TableBackfillRequested')).toHaveLength(2);
  });

  it('leaves a backfill canceled while queued undone when a worker takes it', async () => {
    const dataDir = tempDataDir();
    const queue = { QUEUE_PREFIX: `backfill-cancel-${Date.now()}` };
    const apiOnly = await startServer({ entry: 'api', dataDir, env: queue });
    let worker: RunningServer | undefined;
    try {
      const a = new Api(apiOnly.url);
      await a.send('POST', '/v1/table/c/create', arrowStream(sampleTable(0, 20)), ARROW_STREAM);
      await a.post('/v1/table/c/add_columns', { new_columns: [{ name: 'tripled', computed: 'id * 3' }] });
      const job = (await a.post('/v1/table/c/backfill_column', { column: 'tripled' })).body.job_id;
      expect((await a.post(`/v1/transaction/${job}/describe`, {})).body.status).toBe('Queued');
      expect((await a.post(`/v1/transaction/${job}/alter`, { actions: [{ setStatusAction: { status: 'Canceled' } }] })).status).toBe(200);
      worker = await startServer({ entry: 'worker', dataDir, env: { ...queue, CATALOG_URL: apiOnly.url } });
      // A backfill queued after the canceled one, done: the worker has taken the queue past it.
      await a.post('/v1/table/c/add_columns', { new_columns: [{ name: 'plus', computed: 'id + 1' }] });
      const later = (await a.post('/v1/table/c/backfill_column', { column: 'plus' })).body.job_id;
      const done = await waitFor(() => a.post(`/v1/transaction/${later}/describe`, {}), (r) => r.body.status === 'Succeeded', 60_000);
      expect(done.body.properties.rows_filled).toBe('20');
      const canceled = await a.post(`/v1/transaction/${job}/describe`, {});
      expect(canceled.body.status).toBe('Canceled');
      expect(canceled.body.properties.rows_filled).toBeUndefined();
      const res = await fetch(`${apiOnly.url}/v1/table/c/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ filter: 'id >= 0', k: 100, columns: { column_names: ['tripled'] } }),
      });
      const tripled = arrow.tableFromIPC(new Uint8Array(await res.arrayBuffer())).getChild('tripled')!;
      expect([...tripled].every((v) => v === null)).toBe(true);
    } finally {
      await worker?.stop();
      await apiOnly.stop();
    }
  }, 120_000);

  it('answers 503 code 17 while Redis cannot be reached, recording no job', async () => {
    const port = await freePort();
    const down = await startServer({ entry: 'api', env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      const a = new Api(down.url);
      await a.send('POST', '/v1/table/r/create', arrowStream(sampleTable(0, 5)), ARROW_STREAM);
      await a.post('/v1/table/r/add_columns', { new_columns: [{ name: 'doubled', computed: 'id * 2' }] });
      const refused = await a.post('/v1/table/r/backfill_column', { column: 'doubled' });
      expect([refused.status, refused.body.code]).toEqual([503, 17]);
      const history = (await a.get('/v1/history/table/r')).body.events.map((e: { type: string }) => e.type);
      expect(history).not.toContain('TableBackfillRequested');
    } finally {
      await down.stop();
    }
  }, 60_000);
});
