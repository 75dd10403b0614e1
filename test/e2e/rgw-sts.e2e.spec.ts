import {
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { AssumeRoleCommand, AssumeRoleWithWebIdentityCommand, GetSessionTokenCommand, STSClient } from '@aws-sdk/client-sts';
import * as lancedb from '@lancedb/lancedb';
import { createHash } from 'node:crypto';
import { CLIENT_SCENARIO_PASSED, clientScenario, clientWriter } from '../support/client-process';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RgwServer, startRgw } from '../support/rgw';
import { RunningServer, startServer } from '../support/server';
import { TcpProxy, startTcpProxy } from '../support/tcp-proxy';

const BUCKET = 'warehouse';
const SESSION_SECONDS = 5;
const CHAINING_CHECK_SECONDS = 2;
const KEYS = {
  admin: 'admin-key-0123456789',
  writer: 'writer-key-0123456789',
  reader: 'reader-key-0123456789',
  grantedReader: 'lena-key-0123456789',
  grantedWriter: 'wes-key-0123456789',
};
const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

type Vended = Record<string, string>;

/** HTTP status of an S3 call made with vended credentials: 200 when it went through. */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (e) {
    return (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? -1;
  }
}

/**
 * Short-lived, table-scoped credentials from a real STS (Ceph's RADOS Gateway): the lancedb client,
 * given only the catalog's URL, works on what the catalog vends; what it was handed opens its table
 * and nothing else, read-only for a read-level key, and expires; a client writing across many
 * expiries refreshes; STS away is 503 code 17 and nothing handed out.
 */
describe('STS credentials vended per table (RGW)', () => {
  let rgw: RgwServer;
  let sts: TcpProxy;
  let server: RunningServer;
  let admin: Api;
  let writer: Api;
  let reader: Api;

  const s3With = (o: Vended): S3Client =>
    rgw.client({ accessKeyId: o.aws_access_key_id, secretAccessKey: o.aws_secret_access_key, sessionToken: o.aws_session_token });
  const keyOf = (location: string) => location.slice(`s3://${BUCKET}/`.length);
  const describe_ = async (api: Api, table: string, db?: string) => {
    const answer = await (db ? api.withHeaders({ 'x-lance-database': db }) : api).post(`/v1/table/${table}/describe`, {});
    expect(answer.status).toBe(200);
    return answer.body as { location: string; storage_options: Vended };
  };

  beforeAll(async () => {
    rgw = await startRgw({ minSessionSeconds: SESSION_SECONDS });
    await rgw.createBucket(BUCKET);
    // The analytics database's role reaches only its namespace `a`.
    const analyticsRole = await rgw.createRole('analytics-tables', [`${BUCKET}/lance/analytics/a`]);
    sts = await startTcpProxy(Number(new URL(rgw.endpoint).port));
    server = await startServer({
      env: {
        ...rgw.awsEnv(),
        WAREHOUSE: `s3://${BUCKET}/lance`,
        CLIENT_CREDENTIALS: 'sts',
        STS_ROLE_ARN: rgw.roleArn,
        STS_ROLE_ARN_BY_DATABASE: JSON.stringify({ analytics: analyticsRole, nowhere: 'arn:aws:iam:::role/no-such-role' }),
        AWS_ENDPOINT_URL_STS: `http://127.0.0.1:${sts.port}`,
        VENDED_CREDENTIALS_SECONDS: String(SESSION_SECONDS),
        STS_CHAINING_CHECK_SECONDS: String(CHAINING_CHECK_SECONDS),
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'ops', sha256: sha256(KEYS.admin), databases: ['*'], level: 'admin' },
          { principal: 'etl', sha256: sha256(KEYS.writer), databases: ['default'], level: 'write' },
          { principal: 'viewer', sha256: sha256(KEYS.reader), databases: ['default'], level: 'read' },
          // No level of their own: what grants give them on each table decides.
          { principal: 'lena', sha256: sha256(KEYS.grantedReader), databases: ['default'], level: 'none' },
          { principal: 'wes', sha256: sha256(KEYS.grantedWriter), databases: ['default'], level: 'none' },
        ]),
      },
    });
    admin = new Api(server.url, { 'x-api-key': KEYS.admin });
    writer = new Api(server.url, { 'x-api-key': KEYS.writer });
    reader = new Api(server.url, { 'x-api-key': KEYS.reader });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await sts?.close();
    await rgw?.stop();
  });

  it('runs the client scenario from a process without AWS variables, given only the catalog URL', async () => {
    expect(await clientScenario(server.url, KEYS.admin)).toEqual(CLIENT_SCENARIO_PASSED);
    const before = Date.now();
    const { location, storage_options: options } = await describe_(writer, 'shop%24items');
    expect(location).toMatch(/^s3:\/\/warehouse\/lance\/default\/shop\/items-/);
    expect(Object.keys(options).sort()).toEqual([
      'allow_http',
      'aws_access_key_id',
      'aws_endpoint',
      'aws_region',
      'aws_secret_access_key',
      'aws_session_token',
      'aws_virtual_hosted_style_request',
      'expires_at_millis',
      'refresh_offset_millis',
    ]);
    expect(options.aws_access_key_id).not.toBe(rgw.accessKeyId);
    expect(JSON.stringify(options)).not.toContain(rgw.secretAccessKey);
    const expires = Number(options.expires_at_millis);
    expect(expires).toBeGreaterThan(before);
    expect(expires).toBeLessThanOrEqual(Date.now() + SESSION_SECONDS * 1000 + 1000);
    expect(options.refresh_offset_millis).toBe('1000');
    // Sessions are kept per table and level: a DescribeTable right after the declaration reuses its session.
    const declared = (await writer.post('/v1/table/shop%24cached/declare', {})).body.storage_options as Vended;
    expect((await describe_(writer, 'shop%24cached')).storage_options.aws_access_key_id).toBe(declared.aws_access_key_id);
  });

  it('hands out credentials that open that table and nothing else: not another table, another database, or the bucket', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.admin } });
    await db.createTable('other', [{ id: 1 }], ['shop']);
    const analytics = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.admin, 'x-lance-database': 'analytics' } });
    await analytics.createNamespace(['a']);
    const inAnalytics = await analytics.createTable('events', [{ id: 1 }], ['a']);
    expect(await inAnalytics.countRows()).toBe(1);
    analytics.close();
    db.close();

    const own = keyOf((await describe_(admin, 'shop%24items')).location);
    const other = keyOf((await describe_(admin, 'shop%24other')).location);
    const elsewhere = keyOf((await describe_(admin, 'a%24events', 'analytics')).location);
    const manifest = async (key: string) =>
      ((await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${key}/_versions/` }))).Contents ?? []).find((o) => o.Key!.endsWith('.manifest'))!.Key!;
    const [ownManifest, otherManifest, elsewhereManifest] = await Promise.all([manifest(own), manifest(other), manifest(elsewhere)]);

    const s3 = s3With((await describe_(writer, 'shop%24items')).storage_options);
    const checks = {
      listOwn: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/` }))),
      getOwn: await statusOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: ownManifest }))),
      putOwn: await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${own}/scratch`, Body: 'x' }))),
      deleteOwn: await statusOf(s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${own}/scratch` }))),
      getOther: await statusOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: otherManifest }))),
      listOther: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${other}/` }))),
      putOther: await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${other}/scratch`, Body: 'x' }))),
      putBesideOwn: await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${own}-sibling/x`, Body: 'x' }))),
      getOtherDatabase: await statusOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: elsewhereManifest }))),
      listOtherDatabase: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'lance/analytics/' }))),
      listBucket: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))),
      listDatabase: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'lance/default/' }))),
    };
    expect(checks).toEqual({
      listOwn: 200,
      getOwn: 200,
      putOwn: 200,
      deleteOwn: 200,
      getOther: 403,
      listOther: 403,
      putOther: 403,
      putBesideOwn: 403,
      getOtherDatabase: 403,
      listOtherDatabase: 403,
      listBucket: 403,
      listDatabase: 403,
    });
  });

  it('gives a read-level key read-only credentials, and a write-level key other ones', async () => {
    const own = keyOf((await describe_(admin, 'shop%24items')).location);
    const read = (await describe_(reader, 'shop%24items')).storage_options;
    const write = (await describe_(writer, 'shop%24items')).storage_options;
    expect(read.aws_access_key_id).not.toBe(write.aws_access_key_id);
    const s3 = s3With(read);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/_versions/` }));
    const manifest = listed.Contents!.find((o) => o.Key!.endsWith('.manifest'))!.Key!;
    expect({
      get: await statusOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: manifest }))),
      put: await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${own}/scratch`, Body: 'x' }))),
      overwrite: await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: manifest, Body: 'x' }))),
      delete: await statusOf(s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: manifest }))),
    }).toEqual({ get: 200, put: 403, overwrite: 403, delete: 403 });
    // The lancedb client with a read-level key reads the table and cannot commit to it.
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.reader } });
    const table = await db.openTable('items', ['shop']);
    expect(await table.countRows()).toBe(140);
    await expect(table.add([{ id: 1000, text: 'no', vector: [0, 0, 0, 0] }])).rejects.toThrow();
    expect(await table.countRows()).toBe(140);
    db.close();
  });

  it("vends a principal judged by grants credentials at its level on that table: read-only, writing, or none (404)", async () => {
    for (const [principal, level] of [['lena', 'read'], ['wes', 'write']]) {
      const granted = await admin.post('/v1/grants/create', { grantee: { principal }, securable: { table: ['shop', 'items'] }, level });
      expect(granted.status).toBe(200);
    }
    const lena = new Api(server.url, { 'x-api-key': KEYS.grantedReader });
    const wes = new Api(server.url, { 'x-api-key': KEYS.grantedWriter });
    const own = keyOf((await describe_(admin, 'shop%24items')).location);
    const manifest = (await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/_versions/` }))).Contents!.find((o) => o.Key!.endsWith('.manifest'))!.Key!;
    const tryWith = async (options: Vended) => {
      const s3 = s3With(options);
      return {
        get: await statusOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: manifest }))),
        put: await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${own}/scratch-granted`, Body: 'x' }))),
        delete: await statusOf(s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${own}/scratch-granted` }))),
      };
    };
    expect(await tryWith((await describe_(lena, 'shop%24items')).storage_options)).toEqual({ get: 200, put: 403, delete: 403 });
    expect(await tryWith((await describe_(wes, 'shop%24items')).storage_options)).toEqual({ get: 200, put: 200, delete: 200 });
    // A table of the same namespace without a grant: what a missing table answers, and no credentials.
    const hidden = await lena.post('/v1/table/shop%24other/describe', {});
    const missing = await admin.post('/v1/table/shop%24nothing/describe', {});
    expect([hidden.status, hidden.body.code, hidden.body.error]).toEqual([404, 4, "table 'shop$other' does not exist"]);
    expect([missing.status, missing.body.code]).toEqual([404, 4]);
    expect(hidden.text).not.toContain('aws_');
    expect((await wes.post('/v1/table/shop%24other/describe', {})).status).toBe(404);
    // A batch's declaration vends at the level the grants give on that table, as DeclareTable does.
    const onNamespace = { grantee: { principal: 'wes' }, securable: { namespace: ['shop'] }, level: 'write' };
    expect((await admin.post('/v1/grants/create', onNamespace)).status).toBe(200);
    const batch = await wes.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['shop', 'by-batch'] } }] });
    expect(batch.status).toBe(200);
    const declared = batch.body.results[0].declare_table;
    const s3 = s3With(declared.storage_options);
    expect(await statusOf(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${keyOf(declared.location)}/scratch`, Body: 'x' })))).toBe(200);
    expect((await admin.post('/v1/grants/revoke', onNamespace)).status).toBe(200);
  });

  it('reaches a branch\'s tree (tree/<branch>/ under the table\'s root) with the same table\'s credentials', async () => {
    expect((await writer.post('/v1/table/shop%24items/branches/create', { name: 'dev' })).status).toBe(200);
    const asWriter = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.writer } });
    const dev = await asWriter.openTable('items', ['shop'], { branch: 'dev' });
    await dev.add([{ id: 1000, text: 'on dev', vector: [0, 0, 0, 1] }]);
    asWriter.close();
    const own = keyOf((await describe_(admin, 'shop%24items')).location);
    expect((await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/tree/dev/data/` }))).KeyCount).toBeGreaterThan(0);
    const asReader = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.reader } });
    expect(await (await asReader.openTable('items', ['shop'], { branch: 'dev' })).countRows()).toBe(141);
    expect(await (await asReader.openTable('items', ['shop'])).countRows()).toBe(140);
    asReader.close();
  });

  it('expires what it hands out: a session is refused by the store once its time is up', async () => {
    const options = (await describe_(writer, 'shop%24items')).storage_options;
    const own = keyOf((await describe_(admin, 'shop%24items')).location);
    const s3 = s3With(options);
    expect(await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/` })))).toBe(200);
    await new Promise((r) => setTimeout(r, Number(options.expires_at_millis) - Date.now() + 1500));
    expect(await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/` })))).toBe(403);
    // A DescribeTable now hands out a new session, which works.
    const renewed = (await describe_(writer, 'shop%24items')).storage_options;
    expect(renewed.aws_access_key_id).not.toBe(options.aws_access_key_id);
    expect(await statusOf(s3With(renewed).send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${own}/` })))).toBe(200);
  });

  it(`keeps a client writing for 20 s across ${SESSION_SECONDS}-second sessions: it refreshes and never fails`, async () => {
    expect((await admin.post('/v1/namespace/live/create', {})).status).toBe(200);
    const logged = server.output().length;
    const result = await clientWriter(server.url, KEYS.writer, 'live', 'stream', 20);
    expect(result.failures).toEqual([]);
    expect(result.awsVariables).toEqual([]);
    expect(result.appends as number).toBeGreaterThan(20);
    expect(result.counted).toBe(result.written);
    // Sessions last 5 s: the client asked for credentials again many times over the run.
    const describes = server.output().slice(logged).match(/"url":"\/v1\/table\/live%24stream\/describe/g) ?? [];
    expect(describes.length).toBeGreaterThanOrEqual(4);
  }, 90_000);

  it('uses the database\'s own role, and answers 503 code 17 with nothing handed out when STS refuses it', async () => {
    const analytics = admin.withHeaders({ 'x-lance-database': 'analytics' });
    expect((await analytics.post('/v1/namespace/b/create', {})).status).toBe(200);
    const declared = await analytics.post('/v1/table/b%24t/declare', {});
    expect(declared.status).toBe(200);
    const inA = await describe_(admin, 'a%24events', 'analytics');
    // Sessions of the analytics role: each table's policy allows its own prefix, and the role
    // itself only namespace `a`, so a table in `b` gets credentials that open nothing.
    const putInto = (table: { location: string; storage_options: Vended }) =>
      statusOf(s3With(table.storage_options).send(new PutObjectCommand({ Bucket: BUCKET, Key: `${keyOf(table.location)}/scratch`, Body: 'x' })));
    expect({ a: await putInto(inA), b: await putInto(declared.body) }).toEqual({ a: 200, b: 403 });
    // The same declaration in the default database, under the default role, can write.
    expect(await putInto((await admin.post('/v1/table/shop%24declared/declare', {})).body)).toBe(200);

    const nowhere = admin.withHeaders({ 'x-lance-database': 'nowhere' });
    expect((await nowhere.post('/v1/namespace/n/create', {})).status).toBe(200);
    const refused = await nowhere.post('/v1/table/n%24t/declare', {});
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 17 });
    expect(refused.headers.get('retry-after')).toBeTruthy();
    expect(refused.text).not.toMatch(/aws_|no-such-role/);
    expect((await nowhere.get('/v1/table?include_declared=true')).body.tables).toEqual([]);
  });

  it('answers 503 code 17 with Retry-After and hands out nothing while STS is down; /readyz names it', async () => {
    await writer.post('/v1/table/shop%24fresh/declare', {});
    await sts.cut();
    try {
      const described = await reader.post('/v1/table/shop%24fresh/describe', {});
      expect({ status: described.status, code: described.body.code }).toEqual({ status: 503, code: 17 });
      expect(described.headers.get('retry-after')).toBeTruthy();
      expect(described.body.storage_options).toBeUndefined();
      expect(described.text).not.toContain(rgw.accessKeyId);
      const declared = await writer.post('/v1/table/shop%24later/declare', {});
      expect({ status: declared.status, code: declared.body.code }).toEqual({ status: 503, code: 17 });
      expect((await admin.post('/v1/table/shop%24later/exists', {})).status).toBe(404);
      // Asked for no credentials, the table is described: only how to reach the store.
      const bare = await reader.post('/v1/table/shop%24fresh/describe', { vend_credentials: false });
      expect(bare.status).toBe(200);
      expect(Object.keys(bare.body.storage_options).sort()).toEqual(['allow_http', 'aws_endpoint', 'aws_region', 'aws_virtual_hosted_style_request']);
      const ready = await admin.get('/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body.detail)).toMatchObject({ sts: expect.stringMatching(/^unavailable: /), warehouse: 'ok' });
      expect(ready.body.error).toContain('sts');
    } finally {
      await sts.restore();
    }
    expect((await admin.get('/readyz')).body.checks.sts).toBe('ok');
    expect((await reader.post('/v1/table/shop%24fresh/describe', {})).body.storage_options.aws_session_token).toBeTruthy();
  });
  it('gives a vended session no way to another session: AssumeRole of any role, with any policy, name or duration, and GetSessionToken are refused', async () => {
    const vended = (await describe_(reader, 'shop%24items')).storage_options;
    const stsAs = new STSClient({
      region: rgw.region,
      endpoint: rgw.endpoint,
      maxAttempts: 1,
      credentials: { accessKeyId: vended.aws_access_key_id, secretAccessKey: vended.aws_secret_access_key, sessionToken: vended.aws_session_token },
    });
    const wide = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*', 'sts:*'], Resource: ['*'] }] });
    const answers: Record<string, number> = {};
    try {
      for (const role of [rgw.roleArn, 'arn:aws:iam:::role/analytics-tables']) {
        for (const policy of [undefined, wide]) {
          for (const name of ['x', 'lance-default-read', 'lance-catalog-chaining-check']) {
            for (const seconds of [SESSION_SECONDS, 900, 3600]) {
              const label = `${role.split('/')[1]} ${policy ? 'wide' : 'no'} policy, ${name}, ${seconds} s`;
              answers[label] = await statusOf(stsAs.send(new AssumeRoleCommand({ RoleArn: role, RoleSessionName: name, Policy: policy, DurationSeconds: seconds })));
            }
          }
        }
      }
      answers['GetSessionToken'] = await statusOf(stsAs.send(new GetSessionTokenCommand({ DurationSeconds: 900 })));
      answers['AssumeRoleWithWebIdentity'] = await statusOf(
        stsAs.send(new AssumeRoleWithWebIdentityCommand({ RoleArn: rgw.roleArn, RoleSessionName: 'w', WebIdentityToken: 'eyJhbGciOiJub25lIn0.e30.' })),
      );
    } finally {
      stsAs.destroy();
    }
    expect(Object.keys(answers)).toHaveLength(38);
    expect(Object.entries(answers).filter(([, status]) => status !== 403)).toEqual([]);
    // The catalog's own keys still may: the refusal is the trust policy's condition on session credentials.
    const own = new STSClient({ region: rgw.region, endpoint: rgw.endpoint, maxAttempts: 1, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
    expect(await statusOf(own.send(new AssumeRoleCommand({ RoleArn: rgw.roleArn, RoleSessionName: 'own', DurationSeconds: 900 })))).toBe(200);
    own.destroy();
  });

  it('holds a session to its table: no copy or multipart across tables, no sibling prefix (t1 and t10), no bucket policy, IAM or admin API', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.admin } });
    await db.createTable('t1', [{ id: 1 }], ['shop']);
    await db.createTable('t10', [{ id: 10 }], ['shop']);
    db.close();
    const t1 = await describe_(writer, 'shop%24t1');
    const t10 = keyOf((await describe_(admin, 'shop%24t10')).location);
    const own = keyOf(t1.location);
    const t10Manifest = ((await rgw.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${t10}/_versions/` }))).Contents ?? [])[0].Key!;
    const s3 = s3With(t1.storage_options);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${own}/scratch`, Body: 'x' }));
    const session = { accessKeyId: t1.storage_options.aws_access_key_id, secretAccessKey: t1.storage_options.aws_secret_access_key, sessionToken: t1.storage_options.aws_session_token };
    const iam = (form: Record<string, string>) => rgw.signed(session, 'iam', { method: 'POST', path: '/', form: { ...form, Version: '2010-05-08' } }).then((r) => r.status);
    const policy = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['*'] }, Action: ['s3:*'], Resource: [`arn:aws:s3:::${BUCKET}/*`] }] });
    expect({
      listT10: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${t10}/` }))),
      listT1Bare: await statusOf(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: own.replace(/-[^/]*$/, '') }))),
      getT10: await statusOf(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: t10Manifest }))),
      copyFromT10: await statusOf(s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: `${own}/copied`, CopySource: `${BUCKET}/${t10Manifest}` }))),
      copyIntoT10: await statusOf(s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: `${t10}/_versions/copied.manifest`, CopySource: `${BUCKET}/${own}/scratch` }))),
      multipartIntoT10: await statusOf(s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: `${t10}/data/x.lance` }))),
      multipartOwn: await statusOf(s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: `${own}/data/x.lance` }))),
      putBucketPolicy: await statusOf(s3.send(new PutBucketPolicyCommand({ Bucket: BUCKET, Policy: policy }))),
      deleteBucketPolicy: await statusOf(s3.send(new DeleteBucketPolicyCommand({ Bucket: BUCKET }))),
      // The signer works: the same session lists its own table through it.
      signedListOwn: (await rgw.signed(session, 's3', { method: 'GET', path: `/${BUCKET}`, query: { 'list-type': '2', prefix: `${own}/` } })).status,
      iamListRoles: await iam({ Action: 'ListRoles' }),
      iamPutRolePolicy: await iam({ Action: 'PutRolePolicy', RoleName: 'lance-tables', PolicyName: 'wide', PolicyDocument: policy }),
      iamCreateRole: await iam({ Action: 'CreateRole', RoleName: 'mine', AssumeRolePolicyDocument: policy }),
      adminUser: (await rgw.signed(session, 's3', { method: 'GET', path: '/admin/user', query: { uid: 'catalog' } })).status,
      adminBuckets: (await rgw.signed(session, 's3', { method: 'GET', path: '/admin/bucket', query: { stats: 'true' } })).status,
    }).toEqual({
      listT10: 403,
      listT1Bare: 403,
      getT10: 403,
      copyFromT10: 403,
      copyIntoT10: 403,
      multipartIntoT10: 403,
      multipartOwn: 200,
      putBucketPolicy: 403,
      deleteBucketPolicy: 403,
      signedListOwn: 200,
      iamListRoles: 403,
      iamPutRolePolicy: 403,
      iamCreateRole: 403,
      adminUser: 403,
      adminBuckets: 403,
    });
    // A read-level session copies nothing and starts no upload, even inside its own table.
    const read = s3With((await describe_(reader, 'shop%24t1')).storage_options);
    expect({
      copy: await statusOf(read.send(new CopyObjectCommand({ Bucket: BUCKET, Key: `${own}/copied`, CopySource: `${BUCKET}/${own}/scratch` }))),
      multipart: await statusOf(read.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: `${own}/data/y.lance` }))),
    }).toEqual({ copy: 403, multipart: 403 });
  });

  it('refuses a location holding a pattern character on every path that names one, and reduces names to folder names', async () => {
    const root = `s3://${BUCKET}/lance/default`;
    const patterns = [`${root}/n*`, `${root}/*`, `${root}/shop/*.lance`, `${root}/shop/t?`, `${root}/shop/t[0-9]`, `${root}/shop/{a,b}`, `${root}/shop/\${aws:username}`, `${root}/shop/q"x`];
    const answers: [string, string, number, unknown][] = [];
    for (const location of patterns) {
      const declared = await writer.post('/v1/table/shop%24p/declare', { location });
      answers.push(['declare', location, declared.status, declared.body.code]);
      const registered = await admin.post('/v1/table/shop%24p/register', { location });
      answers.push(['register', location, registered.status, registered.body.code]);
      const created = await writer.send<any>('POST', '/v1/table/shop%24p/create', arrowStream(sampleTable(0, 2)), { ...ARROW_STREAM, 'x-lance-table-location': location });
      answers.push(['create', location, created.status, created.body.code]);
      const batch = await writer.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['shop', 'p'], location } }] });
      answers.push(['batch', location, batch.status, batch.body.code]);
    }
    expect(answers.filter(([, , status, code]) => status !== 400 || code !== 13)).toEqual([]);
    const refused = await writer.post('/v1/table/shop%24p/declare', { location: `${root}/n*` });
    expect(refused.body.error).toMatch(/holds '\*', which storage policies read as a pattern/);
    expect((await admin.post('/v1/table/shop%24p/exists', {})).status).toBe(404);
    // Names with pattern characters become folder names without them; their sessions open their own folder only.
    const named = await writer.post(`/v1/table/${Api.id(['shop', 't*{?}[1]'])}/declare`, {});
    expect(named.status).toBe(200);
    expect(named.body.location).toMatch(/^s3:\/\/warehouse\/lance\/default\/shop\/t_____1_-[0-9a-f]{12}\.lance$/);
    const t10 = keyOf((await describe_(admin, 'shop%24t10')).location);
    expect(await statusOf(s3With(named.body.storage_options).send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${t10}/` })))).toBe(403);
  });

  it('vends nothing while a role lets a session obtain another, says why on /readyz, and resumes once the role is fixed', async () => {
    const logged = server.output().length;
    await rgw.setRoleTrust('lance-tables', { chainable: true });
    try {
      const stopped = await waitFor(
        () => reader.post('/v1/table/shop%24items/describe', {}),
        (r) => r.status === 503,
        CHAINING_CHECK_SECONDS * 1000 * 10,
      );
      expect(stopped.body.code).toBe(17);
      expect(stopped.body.error).toMatch(/credential vending is stopped/);
      expect(stopped.headers.get('retry-after')).toBeTruthy();
      expect(stopped.text).not.toMatch(/arn:|aws_/);
      // Every table and database alike, and nothing is declared without its credentials.
      expect((await admin.post('/v1/table/a%24events/describe', {}, { 'x-lance-database': 'analytics' })).status).toBe(503);
      expect((await writer.post('/v1/table/shop%24unsafe/declare', {})).status).toBe(503);
      expect((await admin.post('/v1/table/shop%24unsafe/exists', {})).status).toBe(404);
      expect((await reader.post('/v1/table/shop%24items/describe', { vend_credentials: false })).status).toBe(200);
      const ready = await admin.get('/readyz');
      expect(ready.status).toBe(503);
      const checks = JSON.parse(ready.body.detail);
      expect(checks.sts).toMatch(/vending stopped: a session of role '(lance-tables|analytics-tables)' obtained a session of role 'lance-tables'/);
      expect(ready.text).not.toContain('arn:');
      const log = server.output().slice(logged);
      expect(log).toMatch(/credential vending stopped: a session of arn:aws:iam:::role\/.* obtained a session of role 'lance-tables'/);
      expect(log).toContain('aws:TokenIssueTime');
    } finally {
      await rgw.setRoleTrust('lance-tables', { chainable: false });
    }
    const resumed = await waitFor(
      () => reader.post('/v1/table/shop%24items/describe', {}),
      (r) => r.status === 200,
      CHAINING_CHECK_SECONDS * 1000 * 10,
    );
    expect(resumed.body.storage_options.aws_session_token).toBeTruthy();
    expect((await admin.get('/readyz')).body.checks.sts).toBe('ok');
    expect(server.output().slice(logged)).toContain('credential vending resumed');
  });
});
