import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { randomBytes, randomUUID } from 'node:crypto';
import { waitFor } from '../support/arrow-data';
import { CLIENT_SCENARIO_PASSED, clientScenario } from '../support/client-process';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';

const BUCKET = 'warehouse';
const finalName = (version: number) => `${((1n << 64n) - 1n - BigInt(version)).toString().padStart(20, '0')}.manifest`;

/**
 * The official lancedb client (managed versioning) with the warehouse on a real S3 server, from a
 * process that knows only the catalog's URL: everything else comes from what the catalog vends.
 */
describe('the lancedb client with the warehouse on S3 (Swift)', () => {
  let swift: SwiftServer;
  let server: RunningServer;
  let api: Api;

  const s3Env = () => ({
    ...swift.awsEnv(),
    WAREHOUSE: `s3://${BUCKET}/lance`,
    CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()),
    CLIENT_STORAGE_OPTIONS_BY_DATABASE: JSON.stringify({ analytics: { expires_at_millis: '4102444800000' } }),
  });
  const keys = async (prefix: string) =>
    ((await swift.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);
  const bytesOf = async (key: string) =>
    Buffer.from(await (await swift.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray());
  const put = (key: string, body: Buffer) => swift.client().send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket(BUCKET);
    server = await startServer({ env: s3Env() });
    api = new Api(server.url);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await swift?.stop();
  });

  it('runs the client scenario from a process without AWS variables, with the storage options the catalog vends', async () => {
    const result = await clientScenario(server.url);
    expect(result).toEqual(CLIENT_SCENARIO_PASSED);
    const location = (await api.post('/v1/table/shop%24items/describe', {})).body.location as string;
    expect(location).toMatch(/^s3:\/\/warehouse\/lance\/default\/shop\/items-/);
    const key = location.slice(`s3://${BUCKET}/`.length);
    expect((await keys(`${key}/_versions/`)).filter((k) => k.endsWith('.manifest'))).toHaveLength(5);
    // Staging manifests go once their versions are recorded and copied.
    expect((await keys(`${key}/_versions/`)).filter((name) => !name.endsWith('.manifest'))).toEqual([]);
  });

  it('hands clients the client options and credentials, never the server\'s own, per database', async () => {
    const described = await api.post('/v1/table/shop%24items/describe', {});
    expect(described.body.storage_options).toEqual({
      aws_endpoint: swift.endpoint,
      aws_region: 'us-east-1',
      allow_http: 'true',
      aws_virtual_hosted_style_request: 'false',
      aws_access_key_id: swift.clientAccessKeyId,
      aws_secret_access_key: swift.clientSecretAccessKey,
    });
    expect(described.text).not.toContain(swift.secretAccessKey);
    const declared = await api.post('/v1/table/shop%24declared/declare', {});
    expect(declared.body.storage_options).toEqual(described.body.storage_options);
    const withoutCredentials = await api.post('/v1/table/shop%24items/describe', { vend_credentials: false });
    expect(Object.keys(withoutCredentials.body.storage_options).sort()).toEqual(['allow_http', 'aws_endpoint', 'aws_region', 'aws_virtual_hosted_style_request']);
    const analytics = api.withHeaders({ 'x-lance-database': 'analytics' });
    await analytics.post('/v1/namespace/a/create', {});
    const other = await analytics.post('/v1/table/a%24t/declare', {});
    expect(other.body.location).toMatch(/^s3:\/\/warehouse\/lance\/analytics\/a\/t-/);
    expect(other.body.storage_options.expires_at_millis).toBe('4102444800000');
    expect(described.body.storage_options.expires_at_millis).toBeUndefined();
  });

  it('commits where Lance alone cannot: Swift refuses the conditional PUT of a direct commit', async () => {
    const direct = await lancedb.connect(`s3://${BUCKET}/direct`, { storageOptions: swift.storageOptions() });
    await expect(direct.createTable('t', [{ id: 1 }])).rejects.toThrow(/Conditional object PUTs are not supported|501/);
    direct.close();
    // The same write through the catalog commits (the scenario above); so does a later writer's.
    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    const table = await db.createTable('through_catalog', [{ id: 1 }], ['shop']);
    await table.add([{ id: 2 }]);
    expect(await table.countRows()).toBe(2);
    db.close();
  });

  it('refuses unmanaged tables on a store without conditional PUT when they are declared, saying why', async () => {
    const unmanaged = await startServer({ env: { ...s3Env(), MANAGED_VERSIONING: 'false' } });
    try {
      // A namespace of its own: the refusal is of the table, once what it would live in exists.
      expect((await new Api(unmanaged.url).post('/v1/namespace/shop/create', {})).status).toBe(200);
      const refused = await new Api(unmanaged.url).post('/v1/table/shop%24plain/declare', {});
      expect(refused.status).toBe(406);
      expect(refused.body.code).toBe(0);
      expect(refused.body.error).toContain('refuses conditional PUTs');
      expect(refused.body.detail).toContain('MANAGED_VERSIONING=true');
      const db = await lancedb.connectNamespace('rest', { uri: unmanaged.url });
      await expect(db.createTable('plain', [{ id: 1 }], ['shop'])).rejects.toThrow(/conditional PUTs/);
      db.close();
    } finally {
      await unmanaged.stop();
    }
  });

  it('answers 503 code 17 while Swift is down, records no version whose copy failed, and works again when it is back', async () => {
    const declared = await api.post('/v1/table/shop%24outage/declare', {});
    const key = (declared.body.location as string).slice(`s3://${BUCKET}/`.length);
    const staging = `${key}/_versions/${finalName(1)}-${randomUUID()}`;
    await put(staging, randomBytes(300));
    await swift.pause();
    try {
      const failed = await api.post('/v1/table/shop%24outage/version/create', { version: 1, manifest_path: staging, naming_scheme: 'V2' });
      expect(failed.status).toBe(503);
      expect(failed.body.code).toBe(17);
      expect(failed.headers.get('retry-after')).toBeTruthy();
      const ready = await api.get('/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body.detail).warehouse).toContain(`s3://${BUCKET}/lance`);
      expect((await api.post('/v1/table/shop%24outage/version/list', {})).body.versions).toEqual([]);
      const insert = await api.post('/v1/table/shop%24items/count_rows', {});
      expect({ status: insert.status, code: insert.body.code }).toEqual({ status: 503, code: 17 });
    } finally {
      await swift.resume();
    }
    const history = await api.get('/v1/history/table/shop%24outage');
    expect(history.body.events.map((e: { type: string }) => e.type)).toEqual(['TableDeclared']);
    expect((await api.get('/readyz')).status).toBe(200);
    const retried = await api.post('/v1/table/shop%24outage/version/create', { version: 1, manifest_path: staging, naming_scheme: 'V2' });
    expect(retried.status).toBe(200);
    expect(retried.body.version.manifest_path).toBe(`${key}/_versions/${finalName(1)}`);
    expect((await api.post('/v1/table/shop%24items/count_rows', {})).body).toBe(140);
  });

  it('commits a version over a final manifest no version record names (a stray copy) at once, with its own bytes', async () => {
    const declared = await api.post('/v1/table/shop%24orphaned/declare', {});
    const key = (declared.body.location as string).slice(`s3://${BUCKET}/`.length);
    await put(`${key}/_versions/${finalName(1)}`, randomBytes(250));
    const ours = randomBytes(250);
    const staging = `${key}/_versions/${finalName(1)}-${randomUUID()}`;
    await put(staging, ours);
    const committed = await api.post('/v1/table/shop%24orphaned/version/create', { version: 1, manifest_path: staging, naming_scheme: 'V2' });
    expect(committed.status).toBe(200);
    expect((await bytesOf(`${key}/_versions/${finalName(1)}`)).equals(ours)).toBe(true);
    expect((await api.post('/v1/table/shop%24orphaned/version/list', {})).body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
  });

  it('serves a recorded version whose committing process ended before its copy with the final manifest made from the record', async () => {
    const declared = await api.post('/v1/table/shop%24unpublished/declare', {});
    const key = (declared.body.location as string).slice(`s3://${BUCKET}/`.length);
    const [first, second] = [randomBytes(260), randomBytes(270)];
    const stagings = [1, 2].map((v) => `${key}/_versions/${finalName(v)}-${randomUUID()}`);
    await put(stagings[0], first);
    await put(stagings[1], second);
    for (const [i, staging] of stagings.entries()) {
      expect((await api.post('/v1/table/shop%24unpublished/version/create', { version: i + 1, manifest_path: staging, naming_scheme: 'V2' })).status).toBe(200);
    }
    // What a process killed between recording a version and copying its manifest leaves: the
    // record, and the staging manifest it names, with no final manifest. (Only the newest version of
    // a table can be left so: a later commit was built on what its client read of it.) The
    // commit's own removal of its staging manifest, made beside its answer, is waited for first.
    for (const until = Date.now() + 10_000; (await keys(stagings[1])).length && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    expect(await keys(stagings[1])).toEqual([]);
    await put(stagings[1], second);
    await swift.client().send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${key}/_versions/${finalName(2)}` }));
    // Another API process, which never saw this version in place, serves it.
    const other = await startServer({ entry: 'api', dataDir: server.dataDir, env: s3Env() });
    try {
      const peer = new Api(other.url);
      // What the lancedb client asks before it reads.
      const latest = await peer.post('/v1/table/shop%24unpublished/version/list?limit=1&descending=true', {});
      expect(latest.body.versions.map((v: { version: number }) => v.version)).toEqual([2]);
      expect((await bytesOf(`${key}/_versions/${finalName(2)}`)).equals(second)).toBe(true);
      expect((await peer.post('/v1/table/shop%24unpublished/version/describe', { version: 2 })).status).toBe(200);
      const made = 'of a recorded version was not in place';
      expect(await other.outputMatching(made)).toContain(made);
    } finally {
      await other.stop();
    }
  });

  it('gives racing version/create calls from two API processes exactly one winner, whose manifest the final object holds', async () => {
    const other = await startServer({ entry: 'api', dataDir: server.dataDir, env: s3Env() });
    try {
      const apis = [api, new Api(other.url)];
      const declared = await api.post('/v1/table/shop%24race/declare', {});
      const key = (declared.body.location as string).slice(`s3://${BUCKET}/`.length);
      const winners: Buffer[] = [];
      for (let version = 1; version <= 12; version++) {
        const contents = [randomBytes(200 + version), randomBytes(200 + version)];
        const stagings = contents.map(() => `${key}/_versions/${finalName(version)}-${randomUUID()}`);
        await Promise.all(stagings.map((s, i) => put(s, contents[i])));
        const create = (a: Api, i: number) => a.post('/v1/table/shop%24race/version/create', { version, manifest_path: stagings[i], naming_scheme: 'V2' });
        const answers = await Promise.all(apis.map((a, i) => create(a, i)));
        const statuses = answers.map((a) => a.status).sort();
        expect({ version, statuses }).toEqual({ version, statuses: [200, 409] });
        expect(answers.find((a) => a.status === 409)!.body.code).toBe(14);
        winners.push(contents[answers.findIndex((a) => a.status === 200)]);
      }
      for (const [i, winner] of winners.entries()) expect((await bytesOf(`${key}/_versions/${finalName(i + 1)}`)).equals(winner)).toBe(true);
      const listed = await apis[1].post('/v1/table/shop%24race/version/list', {});
      expect(listed.body.versions.map((v: { version: number }) => v.version)).toEqual(winners.map((_, i) => i + 1));
    } finally {
      await other.stop();
    }
  });
});
