import { Api } from '../support/http';
import * as arrow from 'apache-arrow';
import { ARROW_STREAM, sampleTable, waitFor } from '../support/arrow-data';
import { apiBeforeWorker } from '../support/api-before-worker';

describe('a job whose table is renamed before it runs', () => {
  const servers = apiBeforeWorker('renamed');

  it('builds the index on the table under its new name', async () => {
    const api = new Api(servers.url);
    for (const ns of ['a', 'b']) expect((await api.post(`/v1/namespace/${ns}/create`, {})).status).toBe(200);
    expect((await api.send('POST', '/v1/table/a%24t/create', Buffer.from(arrow.tableToIPC(sampleTable(0, 50), 'stream')), ARROW_STREAM)).status).toBe(200);
    const requested = await api.post('/v1/table/a%24t/create_index', { column: 'id', index_type: 'BTREE', name: 'by_id' });
    expect(requested.status).toBe(200);
    const tx = requested.body.transaction_id;
    const renamed = await api.post('/v1/table/a%24t/rename', { new_namespace_id: ['b'], new_table_name: 'u' });
    expect(renamed.status).toBe(200);

    await servers.startWorker();
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
