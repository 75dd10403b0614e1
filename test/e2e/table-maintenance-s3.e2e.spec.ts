import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';
import { FINAL, MAINTENANCE_ENV, maintenanceSuite, manifestVersions } from '../support/table-maintenance-suite';

/** Table maintenance on a store without conditional PUTs: outside `npm test`'s budget, in `npm run check:long`. */
maintenanceSuite('table maintenance on an S3 warehouse (Swift)', async () => {
  const swift: SwiftServer = await startSwift();
  await swift.createBucket('maintained');
  const server = await startServer({ env: { ...swift.awsEnv(), WAREHOUSE: 's3://maintained/lance', CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()), ...MAINTENANCE_ENV } });
  const manifests = async (location: string, branch?: string) => {
    const prefix = `${location.replace('s3://maintained/', '')}/${branch ? `tree/${branch}/` : ''}_versions/`;
    const listed = await swift.client().send(new ListObjectsV2Command({ Bucket: 'maintained', Prefix: prefix }));
    return manifestVersions((listed.Contents ?? []).map((o) => o.Key!.slice(prefix.length)));
  };
  return { server, manifests, tearDown: () => swift.stop() };
});

describe("a branch whose create ended before its ref file was written, on a store that refuses conditional PUTs (Swift)", () => {
  let swift: SwiftServer;
  let server: RunningServer;
  let api: Api;
  const GRACE_SECONDS = 20;

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket('branched');
    server = await startServer({
      env: {
        ...swift.awsEnv(),
        WAREHOUSE: 's3://branched/lance',
        CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()),
        MAINTENANCE_SWEEP_SECONDS: '2',
        BRANCH_CREATE_GRACE_SECONDS: String(GRACE_SECONDS),
      },
    });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/m/create', {})).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await swift?.stop();
  });

  it('gets its ref file from the planner once its create can no longer be finishing it, and can be maintained again', async () => {
    const T = 'm%24orphaned';
    const compactBranch = async () => {
      const job = await api.post(`/v1/table/${T}/maintenance/compact`, { branch: 'b' });
      expect(job.status).toBe(202);
      return waitFor(() => api.post(`/v1/transaction/${job.body.job_id}/describe`, {}).then((r) => r.body), (tx) => FINAL.includes(tx.status), 60_000);
    };
    expect((await api.send('POST', `/v1/table/${T}/create`, arrowStream(sampleTable(0, 30)), ARROW_STREAM)).status).toBe(200);
    expect((await api.send('POST', `/v1/table/${T}/insert`, arrowStream(sampleTable(30, 10)), ARROW_STREAM)).status).toBe(200);
    const createdAt = Date.now();
    expect((await api.post(`/v1/table/${T}/branches/create`, { name: 'b', from_version: 1 })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      expect((await api.send('POST', `/v1/table/${T}/insert?branch=b`, arrowStream(sampleTable(100 + i * 5, 5)), ARROW_STREAM)).status).toBe(200);
    }
    const location: string = (await api.post(`/v1/table/${T}/describe`, {})).body.location;
    const Key = `${location.replace('s3://branched/', '')}/_refs/branches/b.json`;
    const s3 = swift.client();
    const refFile = async () => {
      try {
        const got = await s3.send(new GetObjectCommand({ Bucket: 'branched', Key }));
        return JSON.parse(Buffer.from(await got.Body!.transformToByteArray()).toString('utf8'));
      } catch (e) {
        if ((e as { name?: string }).name === 'NoSuchKey') return undefined;
        throw e;
      }
    };
    const written = await refFile();
    expect(written).toMatchObject({ parentVersion: 1 });

    // What a create killed between the branch's first version and its ref file leaves behind:
    // the catalog lists the branch, and Lance refuses to maintain it.
    await s3.send(new DeleteObjectCommand({ Bucket: 'branched', Key }));
    expect((await api.post(`/v1/table/${T}/branches/list`, {})).body.branches).toHaveProperty('b');
    const refused = await compactBranch();
    expect(Date.now() - createdAt).toBeLessThan(GRACE_SECONDS * 1000);
    expect(refused.status).toBe('Failed');

    const repaired = await waitFor(refFile, (f) => f !== undefined, (GRACE_SECONDS + 30) * 1000);
    expect(Date.now() - createdAt).toBeGreaterThanOrEqual(GRACE_SECONDS * 1000);
    expect({ parentBranch: repaired.parentBranch ?? null, parentVersion: repaired.parentVersion, manifestSize: repaired.manifestSize }).toEqual({
      parentBranch: written.parentBranch ?? null,
      parentVersion: written.parentVersion,
      manifestSize: written.manifestSize,
    });
    expect((await compactBranch()).status).toBe('Succeeded');
    expect(Number((await api.post(`/v1/table/${T}/count_rows`, { branch: 'b', predicate: 'id >= 0' })).text)).toBe(45);
    expect(Number((await api.post(`/v1/table/${T}/count_rows`, { predicate: 'id >= 0' })).text)).toBe(40);
  }, 150_000);
});
