import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Reader, Writer } from 'protobufjs/minimal';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { alpha: 'alpha-admin-key-0123456789', beta: 'beta-admin-key-0123456789' };
const finalName = (version: number) => `${((1n << 64n) - 1n - BigInt(version)).toString().padStart(20, '0')}.manifest`;
const manifestOf = (location: string) => {
  const names = readdirSync(join(location, '_versions')).filter((f) => f.endsWith('.manifest'));
  expect(names).toHaveLength(1);
  return readFileSync(join(location, '_versions', names[0]));
};

/**
 * A key of one database must not read another database's rows through a manifest it commits: the
 * server reads what a recorded manifest references with its own access, so every file a committed
 * manifest names (through Lance's base paths above all, which is how shallow clones read their
 * source) must lie inside the committing table's own location.
 */
describe('manifests that reference files outside their table', () => {
  let server: RunningServer;
  let alpha: Api;
  let beta: Api;
  let alphaDb: lancedb.Connection;
  let betaLocation: string;
  /** A shallow clone of beta's table made outside the catalog: its manifest reads beta's files. */
  let cloneManifest: Buffer;
  let alphaRoot: string;

  const T = (name: string) => `/v1/table/shop%24${name}`;
  const versionsOf = async (name: string, branch?: string) =>
    (await alpha.post(`${T(name)}/version/list${branch ? `?branch=${branch}` : ''}`, null)).body.versions.map((v: { version: number }) => v.version);
  /** Writes `bytes` as a staging manifest of `version` in `line` (a table's location, or a branch's), the way Lance names one. */
  const stage = (line: string, version: number, bytes: Buffer) => {
    mkdirSync(join(line, '_versions'), { recursive: true });
    const path = join(line, '_versions', `${finalName(version)}-${randomUUID()}`);
    writeFileSync(path, bytes);
    return path.slice(1);
  };
  const declare = async (name: string) => {
    const declared = await alpha.post(`${T(name)}/declare`, {});
    expect(declared.status).toBe(200);
    return declared.body.location as string;
  };
  const expectRefused = (res: { status: number; body: any; text: string }) => {
    expect([res.status, res.body.code]).toEqual([400, 13]);
    expect(res.body.error).toContain("references files outside this table's location: its base path 0 lies outside this table's location");
    expect(res.body.detail).toContain('Shallow clones across tables are not allowed');
    expect(res.text).not.toContain(betaLocation);
  };

  beforeAll(async () => {
    server = await startServer({
      env: {
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'alpha-admin', sha256: sha256(KEYS.alpha), databases: ['alpha'], level: 'admin' },
          { principal: 'beta-admin', sha256: sha256(KEYS.beta), databases: ['beta'], level: 'admin' },
        ]),
      },
    });
    const headers = (database: 'alpha' | 'beta') => ({ 'x-api-key': KEYS[database], 'x-lance-database': database });
    alpha = new Api(server.url, headers('alpha'));
    beta = new Api(server.url, headers('beta'));
    expect((await beta.post('/v1/namespace/vault/create', {})).status).toBe(200);
    expect((await alpha.post('/v1/namespace/shop/create', {})).status).toBe(200);

    const betaDb = await lancedb.connectNamespace('rest', { uri: server.url, headers: headers('beta') });
    (await betaDb.createTable('secret', Array.from({ length: 5 }, (_, i) => ({ id: i, secret: `beta's secret ${i}` })), ['vault'])).close();
    betaDb.close();
    betaLocation = (await beta.post('/v1/table/vault%24secret/describe', {})).body.location;

    const outside = tempDataDir('outside-the-catalog-');
    const local = await lancedb.connect(outside);
    (await local.cloneTable('c', betaLocation, { isShallow: true })).close();
    local.close();
    cloneManifest = manifestOf(join(outside, 'c.lance'));
    expect(cloneManifest.includes(Buffer.from(betaLocation))).toBe(true);

    alphaDb = await lancedb.connectNamespace('rest', { uri: server.url, headers: headers('alpha') });
    alphaRoot = dirname(dirname(await declare('probe')));
    expect(alphaRoot.endsWith('/alpha')).toBe(true);
  }, 60_000);

  afterAll(async () => {
    alphaDb?.close();
    await server?.stop();
  });

  it("refuses the clone's manifest at version/create with 400 code 13, and records and copies nothing", async () => {
    const location = await declare('thief');
    const staged = stage(location, 1, cloneManifest);
    expectRefused(await alpha.post(`${T('thief')}/version/create`, { version: 1, manifest_path: staged, naming_scheme: 'V2' }));

    expect(await versionsOf('thief')).toEqual([]);
    expect(existsSync(join(location, '_versions', finalName(1)))).toBe(false);
    // Still only declared: no rows, and nothing of beta's to query.
    expect(await alpha.post(`${T('thief')}/count_rows`, {})).toMatchObject({ status: 200, body: 0 });
    expect((await alpha.post(`${T('thief')}/query`, { k: 5 })).body).toMatchObject({ code: 19 });
    // The same commit of the same file as a version of a branch: refused too, and no branch recorded.
    const onBranch = stage(join(location, 'tree', 'evil'), 1, cloneManifest);
    expectRefused(await alpha.post(`${T('thief')}/version/create`, { version: 1, manifest_path: onBranch, naming_scheme: 'V2', branch: 'evil' }));
    expect((await alpha.post(`${T('thief')}/branches/list`, {})).body.branches).toEqual({});
  });

  it('refuses it through BatchCreateTableVersions and BatchCommitTables, with every other version of the batch', async () => {
    const [thief, plain] = [await declare('batch_thief'), await declare('batch_plain')];
    const batches = [
      () =>
        alpha.post('/v1/table/version/batch-create', {
          entries: [
            { id: ['shop', 'batch_plain'], version: 1, manifest_path: stage(plain, 1, Buffer.from('not a Lance manifest')) },
            { id: ['shop', 'batch_thief'], version: 1, manifest_path: stage(thief, 1, cloneManifest) },
          ],
        }),
      () =>
        alpha.post('/v1/table/batch-commit', {
          operations: [
            { create_table_version: { id: ['shop', 'batch_plain'], version: 1, manifest_path: stage(plain, 1, Buffer.from('not a Lance manifest')) } },
            { declare_table: { id: ['shop', 'batch_new'] } },
            { create_table_version: { id: ['shop', 'batch_thief'], version: 1, manifest_path: stage(thief, 1, cloneManifest) } },
          ],
        }),
    ];
    for (const batch of batches) {
      const res = await batch();
      expectRefused(res);
      expect(res.body.error).toMatch(/^operation \d \(create_table_version\): manifest '/);
      expect(await versionsOf('batch_plain')).toEqual([]);
      expect(await versionsOf('batch_thief')).toEqual([]);
      expect(existsSync(join(plain, '_versions', finalName(1)))).toBe(false);
      expect(existsSync(join(thief, '_versions', finalName(1)))).toBe(false);
    }
    expect((await alpha.post(`${T('batch_new')}/exists`, {})).status).toBe(404);
    // A table the batch itself declares is held to its own location too.
    const declared = `${alphaRoot}/shop/declared.lance`;
    const declaring = await alpha.post('/v1/table/batch-commit', {
      operations: [
        { declare_table: { id: ['shop', 'batch_declared'], location: declared } },
        { create_table_version: { id: ['shop', 'batch_declared'], version: 1, manifest_path: stage(declared, 1, cloneManifest) } },
      ],
    });
    expectRefused(declaring);
    expect((await alpha.post(`${T('batch_declared')}/exists`, {})).status).toBe(404);
  });

  it('refuses to register a location whose versions read another table', async () => {
    const local = await lancedb.connect(join(alphaRoot, 'loot'));
    (await local.cloneTable('c', betaLocation, { isShallow: true })).close();
    local.close();
    const res = await alpha.post(`${T('registered')}/register`, { location: join(alphaRoot, 'loot', 'c.lance') });
    expect([res.status, res.body.code]).toEqual([400, 13]);
    expect(res.body.error).toContain("references files outside this table's location");
    expect(res.text).not.toContain(betaLocation);
    expect((await alpha.post(`${T('registered')}/exists`, {})).status).toBe(404);
  });

  it("still takes the lancedb client's whole workload, branches included, and a clone's manifest that reads the table itself", async () => {
    const table = await alphaDb.createTable('own', Array.from({ length: 200 }, (_, i) => ({ id: i, text: `row ${i}` })), ['shop']);
    await table.add([{ id: 1000, text: 'added' }]);
    await table.delete('id < 10');
    await table.createIndex('id', { config: lancedb.Index.btree() });
    expect(await table.countRows()).toBe(191);
    const dev = await (await table.branches()).create('dev');
    await dev.add([{ id: 2000, text: 'on dev' }]);
    await dev.delete('id < 20');
    const feature = await (await dev.branches()).create('feature', 'dev');
    await feature.add([{ id: 3000, text: 'on feature' }]);
    expect([await table.countRows(), await dev.countRows(), await feature.countRows()]).toEqual([191, 182, 183]);
    expect((await alpha.post(`${T('own')}/branches/create`, { name: 'from_http', from_branch: 'dev' })).status).toBe(200);
    expect((await alpha.post(`${T('own')}/count_rows`, { branch: 'from_http' })).body).toBe(182);
    expect((await alpha.post(`${T('own')}/count_rows`, { branch: 'dev', predicate: 'id >= 2000' })).body).toBe(1);
    for (const t of [table, dev, feature]) t.close();

    // A shallow clone of the table itself made outside the catalog reads only this table's files:
    // committed as the table's next version, it is taken.
    const location = (await alpha.post(`${T('own')}/describe`, {})).body.location as string;
    const latest = (await versionsOf('own')).at(-1) as number;
    const outside = tempDataDir('own-clone-');
    const local = await lancedb.connect(outside);
    (await local.cloneTable('c', location, { isShallow: true })).close();
    local.close();
    const staged = stage(location, latest + 1, manifestOf(join(outside, 'c.lance')));
    const committed = await alpha.post(`${T('own')}/version/create`, { version: latest + 1, manifest_path: staged, naming_scheme: 'V2' });
    expect(committed.status).toBe(200);
    expect((await alpha.post(`${T('own')}/count_rows`, {})).body).toBe(191);
  });
});

/**
 * A real Lance manifest with every base path's `path` replaced (and `padding` bytes of an unknown
 * field before them): the manifest message is written again around them, the rest kept as it was.
 */
function rebased(file: Buffer, path: string, padding = 0): Buffer {
  const position = Number(file.readBigInt64LE(file.length - 16));
  const message = file.subarray(position + 4, position + 4 + file.readUInt32LE(position));
  const parts: Uint8Array[] = [];
  if (padding) parts.push(Writer.create().uint32((1000 << 3) | 2).bytes(Buffer.alloc(padding, 7)).finish());
  const r = Reader.create(message);
  while (r.pos < r.len) {
    const start = r.pos;
    const tag = r.uint32();
    if (tag !== ((18 << 3) | 2)) {
      r.skipType(tag & 7);
      parts.push(message.subarray(start, r.pos));
      continue;
    }
    const end = r.uint32() + r.pos;
    const base = Writer.create();
    while (r.pos < end) {
      const field = r.uint32();
      if (field === 1 << 3) base.uint32(1 << 3).uint32(r.uint32());
      else if (field === 3 << 3) base.uint32(3 << 3).bool(r.bool());
      else r.skipType(field & 7);
    }
    base.uint32((4 << 3) | 2).string(path);
    parts.push(Writer.create().uint32(tag).bytes(base.finish()).finish());
  }
  const body = Buffer.concat(parts);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(body.length);
  const footer = Buffer.from(file.subarray(file.length - 16));
  return Buffer.concat([file.subarray(0, position), length, body, footer]);
}

/** The same on a warehouse on S3 (Swift): the staging manifest is read from the store and checked before its copy. */
describe('manifests that reference another table on an S3 warehouse (Swift)', () => {
  const BUCKET = 'warehouse';
  let swift: SwiftServer;
  let server: RunningServer;
  let api: Api;
  let cloneManifest: Buffer;

  const key = (location: string) => location.slice(`s3://${BUCKET}/`.length);
  const exists = (k: string) =>
    swift
      .client()
      .send(new HeadObjectCommand({ Bucket: BUCKET, Key: k }))
      .then(
        () => true,
        () => false,
      );
  const commit = async (location: string, name: string, bytes: Buffer) => {
    const staging = `${key(location)}/_versions/${finalName(1)}-${randomUUID()}`;
    await swift.client().send(new PutObjectCommand({ Bucket: BUCKET, Key: staging, Body: bytes }));
    return api.post(`/v1/table/shop%24${name}/version/create`, { version: 1, manifest_path: staging, naming_scheme: 'V2' });
  };
  const versionsOf = async (name: string) => (await api.post(`/v1/table/shop%24${name}/version/list`, null)).body.versions;

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket(BUCKET);
    server = await startServer({ env: { ...swift.awsEnv(), WAREHOUSE: `s3://${BUCKET}/lance` } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/shop/create', {})).status).toBe(200);
    // Lance cannot commit to Swift on its own (no conditional PUT): the clone is made on a local
    // disk, and its base path then names a table of the warehouse.
    const outside = tempDataDir('s3-clone-');
    const local = await lancedb.connect(outside);
    (await local.createTable('src', [{ id: 1 }, { id: 2 }])).close();
    (await local.cloneTable('c', join(outside, 'src.lance'), { isShallow: true })).close();
    local.close();
    cloneManifest = manifestOf(join(outside, 'c.lance'));
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await swift?.stop();
  });

  it("refuses a manifest whose base path is another table's prefix, and copies and records nothing", async () => {
    const victim = await api.send<any>('POST', '/v1/table/shop%24victim/create', arrowStream(sampleTable(0, 5)), ARROW_STREAM);
    expect(victim.status).toBe(200);
    const thief = (await api.post('/v1/table/shop%24thief/declare', {})).body.location as string;
    for (const [bytes, padding] of [
      [rebased(cloneManifest, victim.body.location), 'one read of the tail'],
      // A manifest larger than one read of its tail: the rest is read before the check.
      [rebased(cloneManifest, victim.body.location, 200_000), 'two reads'],
      [rebased(cloneManifest, `${thief}-other`), 'a prefix the name shares'],
    ] as const) {
      const res = await commit(thief, 'thief', bytes);
      expect([padding, res.status, res.body.code]).toEqual([padding, 400, 13]);
      expect(res.body.error).toContain("its base path 0 lies outside this table's location");
      expect(res.body.detail).toContain('Shallow clones across tables are not allowed');
      expect(await versionsOf('thief')).toEqual([]);
      expect(await exists(`${key(thief)}/_versions/${finalName(1)}`)).toBe(false);
    }
  });

  it('takes the same manifest when its base path lies inside the table (a branch of it)', async () => {
    const inside = (await api.post('/v1/table/shop%24inside/declare', {})).body.location as string;
    const res = await commit(inside, 'inside', rebased(cloneManifest, `${inside}/tree/dev`, 200_000));
    expect(res.status).toBe(200);
    expect(await exists(`${key(inside)}/_versions/${finalName(1)}`)).toBe(true);
    expect((await versionsOf('inside')).map((v: { version: number }) => v.version)).toEqual([1]);
  });
});
