import * as lancedb from '@lancedb/lancedb';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const FINAL = ['Succeeded', 'Failed', 'Canceled'];

/**
 * DropTableIndex while the worker's Lance build of that index runs: the drop is answered at once
 * (nothing is built yet), and the build must not bring the index back when it ends.
 */
describe('an index dropped while its build runs', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    // The maintenance planner would compact the table's 30 fragments while the index builds: Lance
    // then refuses the build's commit, and a later attempt finds the request gone before building.
    server = await startServer({ env: { MAINTENANCE_PLAN_DELAY_MS: '3600000', MAINTENANCE_PLAN_MAX_DELAY_MS: '3600000' } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/x/create', {})).status).toBe(200);
  }, 120_000);

  afterAll(async () => server?.stop());

  it('does not come back: Lance holds no such index, the build ends Failed saying so, and the name can be requested again', async () => {
    const T = 'x%24t';
    const BATCH = 50_000;
    expect((await api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, BATCH)), ARROW_STREAM)).status).toBe(200);
    for (let i = 1; i < 30; i++) expect((await api.send('POST', `/v1/table/${T}/insert`, arrowStream(sampleTable(i * BATCH, BATCH)), ARROW_STREAM)).status).toBe(200);
    const settle = (transactionId: string) =>
      waitFor(() => api.post(`/v1/transaction/${transactionId}/describe`, {}).then((r) => r.body), (b) => FINAL.includes(b.status), 60_000);

    const requested = await api.post(`/v1/table/${T}/create_scalar_index`, { column: 'labels', index_type: 'LABEL_LIST', name: 'ix' });
    expect(requested.status).toBe(200);
    const transactionId = requested.body.transaction_id;
    await waitFor(() => api.post(`/v1/transaction/${transactionId}/describe`, {}).then((r) => r.body.status), (s) => s !== 'Queued', 30_000);
    expect((await api.post(`/v1/table/${T}/index/ix/drop`, {})).status).toBe(200);

    const ended = await settle(transactionId);
    expect({ status: ended.status, reason: ended.properties.reason, attempt: ended.properties.attempt }).toEqual({
      status: 'Failed',
      reason: expect.stringContaining('was dropped or requested again while it was built'),
      attempt: '1',
    });
    const db = await lancedb.connectNamespace('rest', { uri: server.url } as any);
    const table = await db.openTable('t', ['x']);
    expect((await table.listIndices()).map((i) => i.name)).toEqual([]);
    table.close();
    db.close();
    expect((await api.post(`/v1/table/${T}/index/list`, {})).body.indexes).toEqual([]);

    const again = await api.post(`/v1/table/${T}/create_scalar_index`, { column: 'labels', index_type: 'LABEL_LIST', name: 'ix' });
    expect(again.status).toBe(200);
    expect((await settle(again.body.transaction_id)).status).toBe('Succeeded');
    expect((await api.post(`/v1/table/${T}/index/list`, {})).body.indexes.map((i: { index_name: string }) => i.index_name)).toEqual(['ix']);
  }, 240_000);
});
