import * as arrow from 'apache-arrow';
import { createHash } from 'node:crypto';
import { ARROW_STREAM, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const ROOT_KEY = 'mv-root-key-0123456789';
const EVE_KEY = 'mv-eve-key-0123456789';
const KEYS = JSON.stringify([
  { principal: 'root', sha256: sha256(ROOT_KEY), databases: ['*'], level: 'admin' },
  { principal: 'eve', sha256: sha256(EVE_KEY), databases: ['default'], level: 'none' },
]);
// A view keeps its provenance by the source's stable row ids.
const STABLE_ROW_IDS = `storage_options=${encodeURIComponent('{"new_table_enable_stable_row_ids":"true"}')}`;
const ipc = (t: arrow.Table) => Buffer.from(arrow.tableToIPC(t, 'stream'));
const pins = (values: string[]) =>
  new arrow.Table({ id: arrow.vectorFromArray(Int32Array.from(values.map((_, i) => i + 1))), pin: arrow.vectorFromArray(values, new arrow.Utf8()) });
/** lancedb's own definition of a view over `source`, as its schema metadata keeps it. */
const definitionOver = (source: string[]) =>
  JSON.stringify({
    kind: 'namespaced_select',
    source_namespace: source.slice(0, -1),
    source_table: source[source.length - 1],
    inputs: ['id', 'pin'],
    projections: [
      { output: 'id', expression: 'id' },
      { output: 'pin', expression: 'pin' },
    ],
  });

/**
 * A view's definition is schema metadata any writer of its table may write, and a worker refreshes
 * it with the server's own credentials: the source it reads must be one the requester reads.
 */
describe('materialized views under grants', () => {
  const dataDir = tempDataDir();
  const env = { AUTH_API_KEYS: KEYS, AUTH_SERVICE_KEY: 'mv-grants-service-key-0123456789abcdef', QUEUE_PREFIX: `mv-grants-${process.pid}-${Date.now()}` };
  let apiServer: RunningServer;
  let worker: RunningServer | undefined;
  let root: Api;
  let eve: Api;

  beforeAll(async () => {
    apiServer = await startServer({ dataDir, entry: 'api', env });
    root = new Api(apiServer.url, { 'x-api-key': ROOT_KEY });
    eve = new Api(apiServer.url, { 'x-api-key': EVE_KEY });
    for (const ns of ['secret', 'sandbox']) expect((await root.post(`/v1/namespace/${ns}/create`, {})).status).toBe(200);
    expect((await root.send('POST', `/v1/table/secret%24ledger/create?${STABLE_ROW_IDS}`, ipc(pins(['PIN-1111', 'PIN-2222'])), ARROW_STREAM)).status).toBe(200);
    expect((await root.send('POST', `/v1/table/sandbox%24public/create?${STABLE_ROW_IDS}`, ipc(pins(['open-1', 'open-2'])), ARROW_STREAM)).status).toBe(200);
    expect((await root.post('/v1/grants/create', { grantee: { principal: 'eve' }, securable: { namespace: ['sandbox'] }, level: 'write' })).status).toBe(200);
    // Eve's own table, made a view by its schema metadata alone.
    const mine = new arrow.Table({
      id: arrow.vectorFromArray(Int32Array.from([0])),
      pin: arrow.vectorFromArray(['x'], new arrow.Utf8()),
      __source_row_id: arrow.vectorFromArray(BigUint64Array.from([0n])),
    });
    expect((await eve.send('POST', '/v1/table/sandbox%24mine/create', ipc(mine), ARROW_STREAM)).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await apiServer?.stop();
  });

  const setDefinition = async (source: string[]) => expect((await eve.post('/v1/table/sandbox%24mine/schema_metadata/update', { 'mv.definition': definitionOver(source) })).status).toBe(200);
  const pinsOfMine = async () => {
    const answer = await fetch(`${apiServer.url}/v1/table/sandbox%24mine/query`, {
      method: 'POST',
      headers: { 'x-api-key': EVE_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ k: 100, vector: [], columns: { column_names: ['pin'] } }),
    });
    expect(answer.status).toBe(200);
    return arrow.tableFromIPC(new Uint8Array(await answer.arrayBuffer())).toArray().map((r) => r.pin as string);
  };

  it('refuses a refresh of a view whose source the caller may not read, as if the source were missing', async () => {
    await setDefinition(['secret', 'ledger']);
    const refused = await eve.post('/v1/materialized_view/sandbox%24mine/refresh', {});
    await setDefinition(['secret', 'nothing']);
    const missing = await eve.post('/v1/materialized_view/sandbox%24mine/refresh', {});
    expect(refused.status).toBe(404);
    expect({ ...refused.body, error: refused.body.error.replace('ledger', 'nothing') }).toEqual(missing.body);
    expect(refused.body.code).toBe((await eve.post('/v1/table/secret%24ledger/describe', {})).body.code);
  });

  it('refreshes only from the definition judged when the refresh was requested', async () => {
    await setDefinition(['sandbox', 'public']);
    const requested = await eve.post('/v1/materialized_view/sandbox%24mine/refresh', {});
    expect(requested.status).toBe(202);
    // Changed before any worker took the job: the job refuses it.
    await setDefinition(['secret', 'ledger']);
    worker = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: apiServer.url } });
    const done = await waitFor(() => eve.post(`/v1/transaction/${requested.body.job_id}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000);
    expect(done.body).toMatchObject({ status: 'Failed', properties: { reason: expect.stringMatching(/definition of view 'sandbox\$mine' changed since its refresh was requested; request the refresh again/) } });
    expect(await pinsOfMine()).toEqual(['x']);

    // A definition the caller may read refreshes.
    await setDefinition(['sandbox', 'public']);
    const again = await eve.post('/v1/materialized_view/sandbox%24mine/refresh', {});
    const refreshed = await waitFor(() => eve.post(`/v1/transaction/${again.body.job_id}/describe`, {}), (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status), 60_000);
    expect(refreshed.body.status).toBe('Succeeded');
    expect((await pinsOfMine()).sort()).toEqual(['open-1', 'open-2']);
  }, 120_000);
});
