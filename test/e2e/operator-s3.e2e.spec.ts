import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { TestDatabase, createTestDatabase } from '../support/postgres';
import { BuiltTable, countEveryVersion, lanceCatalog, replayDigests, writeCatalog } from '../support/operator';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';

const BUCKET = 'warehouse';

/** `lance-catalog` with the warehouse on a real S3 server (Swift): archives, verify and recover there. */
describe('lance-catalog with the warehouse on S3 (Swift)', () => {
  let swift: SwiftServer;
  let server: RunningServer;
  let tables: BuiltTable[];
  const databases: TestDatabase[] = [];
  const s3Env = () => ({ ...swift.awsEnv(), WAREHOUSE: `s3://${BUCKET}/lance`, CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()), MAINTENANCE_PLANNER: 'false' });
  const postgres = async () => {
    const db = await createTestDatabase('operator_s3');
    databases.push(db);
    return db.url;
  };

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket(BUCKET);
    server = await startServer({ env: s3Env() });
    tables = await writeCatalog(server.url, { namespaces: 1, tablesPerNamespace: 2, versionsPerTable: 3 });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await swift?.stop();
    for (const db of databases) await db.drop();
  });

  it('exports to and imports from an s3:// archive', async () => {
    const env = { ...s3Env(), EVENT_STORE: 'embedded', DATA_DIR: server.dataDir };
    const exported = await lanceCatalog(['export', '--to', `s3://${BUCKET}/backups/catalog.ndjson.gz`, '--json'], env);
    expect(exported.code).toBe(0);
    const listed = await swift.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'backups/' }));
    expect(listed.Contents?.map((o) => [o.Key, o.Size])).toEqual([['backups/catalog.ndjson.gz', exported.json.bytes]]);
    const target = await postgres();
    const imported = await lanceCatalog(['import', '--from', `s3://${BUCKET}/backups/catalog.ndjson.gz`, '--json'], { ...env, EVENT_STORE: target });
    expect(imported.code).toBe(0);
    expect(await replayDigests({ ...env, EVENT_STORE: target })).toEqual(await replayDigests(env));
  }, 60_000);

  it('verifies the catalog against the bucket, and recovers it from the bucket alone', async () => {
    const verified = await lanceCatalog(['verify', '--json'], { ...s3Env(), EVENT_STORE: 'embedded', DATA_DIR: server.dataDir });
    expect(verified.json).toMatchObject({ tables: 2, findings: 0 });
    expect(verified.code).toBe(0);

    const env = { ...s3Env(), EVENT_STORE: await postgres(), DATA_DIR: tempDataDir() };
    const recovered = await lanceCatalog(['recover', '--from-warehouse', '--json'], env);
    expect(recovered.json).toMatchObject({ databases: 1, namespaces: 1, tables: 2, branches: 1, tags: 1 });
    const second = await startServer({ env });
    try {
      const counts = await countEveryVersion(second.url, tables);
      expect(counts.filter((c) => c.counted !== c.expected)).toEqual([]);
      expect(counts.length).toBeGreaterThanOrEqual(7);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
