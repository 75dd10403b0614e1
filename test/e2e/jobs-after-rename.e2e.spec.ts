import { Api } from '../support/http';
import * as arrow from 'apache-arrow';
import { ARROW_STREAM, sampleTable, waitFor } from '../support/arrow-data';
import { RunningServer, startServer, tempDataDir } from '../support/server';

describe('a job whose table is renamed before it runs', () => {
  const dataDir = tempDataDir();
  const env = { QUEUE_PREFIX: `renamed-${process.pid}-${Date.now()}` };
  let apiServer: RunningServer;
  let worker: RunningServer | undefined;

  beforeAll(async () => {
    apiServer = await startServer({ dataDir, entry: 'api', env });
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await apiServer?.stop();
  });

  it('builds the index on the table under its new name', async () => {
    const api = new Api(apiServer.url);
    for (const ns of ['a', 'b']) expect((await api.post(`/v1/namespace/${ns}/create`, {})).status).toBe(200);
    expect((await api.send('POST', '/v1/table/a%24t/create', Buffer.from(arrow.tableToIPC(sampleTable(0, 50), 'stream')), ARROW_STREAM)).status).toBe(200);
    const requested = await api.post('/v1/table/a%24t/create_index', { column: 'id', index_type: 'BTREE', name: 'by_id' });
    expect(requested.status).toBe(200);
    const tx = requested.body.transaction_id;
    const renamed = await api.post('/v1/table/a%24t/rename', { new_namespace_id: ['b'], new_table_name: 'u' });
    expect(renamed.status).toBe(200);

    worker = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } });
    const final = await waitFor(() => api.post(`/v1/transaction/${tx}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000);
    expect(final.body).toMatchObject({ status: 'Succeeded' });
    const indexes = (await api.post('/v1/table/b%24u/index/list', {})).body.indexes;
    expect(indexes).toEqual([expect.objectContaining({ index_name: 'by_id' })]);
    // Its progress names the table as it is called now: a subscription to namespace b takes it.
    const progress = (await api.get(`/v1/history/transaction/${tx}`)).body.events.filter((e: { type: string }) => e.type === 'TransactionAltered');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const e of progress) expect(e.data.table).toEqual(['b', 'u']);
  }, 120_000);
});
