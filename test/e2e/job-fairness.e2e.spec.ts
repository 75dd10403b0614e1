import { Api } from '../support/http';
import * as arrow from 'apache-arrow';
import { ARROW_STREAM, sampleTable, waitFor } from '../support/arrow-data';
import { apiBeforeWorker } from '../support/api-before-worker';

/**
 * The job queues are shared by every database: one that queues many builds does not make another's
 * one build wait behind all of them.
 */
describe('jobs of several databases on one worker', () => {
  const servers = apiBeforeWorker('fairness');

  /** Queues a BTREE build on a new table of `database`; answers its transaction id. */
  async function queueBuild(database: string, table: string): Promise<string> {
    const api = new Api(servers.url, { 'x-lance-database': database });
    const created = await api.send('POST', `/v1/table/ns%24${table}/create`, Buffer.from(arrow.tableToIPC(sampleTable(0, 50), 'stream')), ARROW_STREAM);
    expect(created.status).toBe(200);
    const requested = await api.post(`/v1/table/ns%24${table}/create_index`, { column: 'id', index_type: 'BTREE', name: 'by_id' });
    expect(requested.status).toBe(200);
    return requested.body.transaction_id;
  }

  it("runs another database's build second, not after every build the first queued", async () => {
    for (const database of ['busy', 'quiet']) expect((await new Api(servers.url, { 'x-lance-database': database }).post('/v1/namespace/ns/create', {})).status).toBe(200);
    const builds: { database: string; tx: string }[] = [];
    for (let i = 0; i < 4; i++) builds.push({ database: 'busy', tx: await queueBuild('busy', `t${i}`) });
    builds.push({ database: 'quiet', tx: await queueBuild('quiet', 'only') });
    // Queued with priorities, they are counted as waiting all the same.
    expect((await new Api(servers.url).get('/metrics')).text).toMatch(/lance_catalog_queue_jobs\{queue="index-builds",state="waiting"\} 5\n/);

    await servers.startWorker({ WORKER_CONCURRENCY: '1' });
    const startedAt = new Map<string, string>();
    for (const { database, tx } of builds) {
      const api = new Api(servers.url, { 'x-lance-database': database });
      const final = await waitFor(() => api.post(`/v1/transaction/${tx}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000);
      expect(final.body).toMatchObject({ status: 'Succeeded' });
      const starts = (await api.get(`/v1/history/transaction/${tx}`)).body.events.filter((e: any) => e.data.setProperties?.started_at);
      expect(starts).toHaveLength(1);
      startedAt.set(tx, starts[0].data.setProperties.started_at);
    }
    const order = [...builds].sort((a, b) => startedAt.get(a.tx)!.localeCompare(startedAt.get(b.tx)!)).map((b) => b.database);
    expect(order).toEqual(['busy', 'quiet', 'busy', 'busy', 'busy']);
  }, 120_000);
});
