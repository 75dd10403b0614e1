import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { CLIENT_SCENARIO_PASSED, clientScenario } from '../support/client-process';
import { Api } from '../support/http';
import { RgwServer, startRgw } from '../support/rgw';
import { RunningServer, startServer } from '../support/server';

const BUCKET = 'warehouse';

/**
 * The warehouse on Ceph's RADOS Gateway, an S3 server that honours conditional PUTs (Swift does
 * not: test/e2e/s3-*.e2e.spec.ts): the catalog's data plane on objects, Lance committing to the
 * store on its own, and unmanaged tables, which only such a store can hold.
 */
describe('the warehouse on RGW (conditional PUT)', () => {
  let rgw: RgwServer;
  let server: RunningServer;
  let api: Api;

  const objects = async (prefix: string) =>
    ((await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);
  const settle = (transactionId: string) =>
    waitFor(
      () => api.post(`/v1/transaction/${transactionId}/describe`, {}),
      (r) => ['Succeeded', 'Failed', 'Canceled'].includes(r.body.status),
      60_000,
    ).then((r) => r.body);

  beforeAll(async () => {
    rgw = await startRgw();
    await rgw.createBucket(BUCKET);
    server = await startServer({ env: { ...rgw.awsEnv(), WAREHOUSE: `s3://${BUCKET}/lance`, DROP_RETENTION_SECONDS: '0' } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/shop/create', {})).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await rgw?.stop();
  });

  it('creates, writes, counts, queries, indexes and drops a table through the catalog, all on objects', async () => {
    const created = await api.send<any>('POST', '/v1/table/shop%24items/create', arrowStream(sampleTable(0, 300)), ARROW_STREAM);
    expect(created.status).toBe(200);
    expect(created.body.location).toMatch(/^s3:\/\/warehouse\/lance\/default\/shop\/items-[0-9a-f]{12}\.lance$/);
    const key = created.body.location.replace(`s3://${BUCKET}/`, '');
    expect((await api.send('POST', '/v1/table/shop%24items/insert', arrowStream(sampleTable(300, 100)), ARROW_STREAM)).status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/count_rows', { predicate: 'id >= 300' })).body).toBe(100);
    expect((await api.post('/v1/table/shop%24items/delete', { predicate: 'id >= 390' })).status).toBe(200);
    const index = await api.post('/v1/table/shop%24items/create_index', { column: 'id', index_type: 'BTREE', name: 'id_idx' });
    expect((await settle(index.body.transaction_id)).status).toBe('Succeeded');
    const probe = Array.from(sampleTable(7, 1).getChild('vector')!.get(0)!.toArray());
    const hits = await api.post('/v1/table/shop%24items/query', { vector: { single_vector: probe }, k: 1, columns: { column_names: ['id'] }, filter: 'id < 100' });
    expect(hits.status).toBe(200);
    expect((await api.post('/v1/table/shop%24items/count_rows', {})).body).toBe(390);
    expect((await objects(`${key}/_versions/`)).filter((k) => k.endsWith('.manifest')).length).toBeGreaterThanOrEqual(4);
    expect((await api.post('/v1/table/shop%24items/drop', {})).status).toBe(200);
    await waitFor(() => objects(`${key}/`), (left) => left.length === 0, 30_000);
  });

  it('lets Lance commit to the store on its own: its conditional PUT decides racing writers', async () => {
    const direct = await lancedb.connect(`s3://${BUCKET}/direct`, { storageOptions: rgw.storageOptions() });
    const table = await direct.createTable('t', [{ id: 1 }]);
    const twin = await direct.openTable('t');
    // Two handles at version 1 commit version 2 at once: one PUT wins, Lance retries the other as version 3.
    await Promise.all([table.add([{ id: 2 }]), twin.add([{ id: 3 }])]);
    await table.checkoutLatest();
    expect(await table.countRows()).toBe(3);
    expect((await table.listVersions()).map((v) => v.version)).toEqual([1, 2, 3]);
    expect((await objects('direct/t.lance/_versions/')).filter((k) => k.endsWith('.manifest'))).toHaveLength(3);
    twin.close();
    table.close();
    direct.close();
  });

  it('serves unmanaged tables: the lancedb client commits straight to the store with the table-scoped credentials vended to it', async () => {
    const unmanaged = await startServer({
      env: {
        ...rgw.awsEnv(),
        WAREHOUSE: `s3://${BUCKET}/plain`,
        MANAGED_VERSIONING: 'false',
        CLIENT_CREDENTIALS: 'sts',
        STS_ROLE_ARN: rgw.roleArn,
        VENDED_CREDENTIALS_SECONDS: '900',
      },
    });
    try {
      const plain = new Api(unmanaged.url);
      expect(await clientScenario(unmanaged.url)).toEqual(CLIENT_SCENARIO_PASSED);
      const described = await plain.post('/v1/table/shop%24items/describe', {});
      expect(described.body.managed_versioning).toBe(false);
      expect(described.body.storage_options.aws_session_token).toBeTruthy();
      // The catalog lists the versions Lance committed from their manifests; it recorded none of them.
      const listed = await plain.post('/v1/table/shop%24items/version/list', {});
      expect(listed.body.versions.map((v: { version: number }) => v.version).sort()).toEqual([1, 2, 3, 4, 5]);
      const history = await plain.get('/v1/history/table/shop%24items');
      expect(history.body.events.map((e: { type: string }) => e.type)).toEqual(['TableDeclared']);
      expect((await plain.post('/v1/table/shop%24items/count_rows', {})).body).toBe(140);
    } finally {
      await unmanaged.stop();
    }
  });
});
