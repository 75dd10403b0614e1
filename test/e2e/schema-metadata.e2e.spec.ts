import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import * as lancedb from '@lancedb/lancedb';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';
import { SwiftServer, startSwift } from '../support/swift';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { admin: 'schema-admin-key-0123456789', writer: 'schema-writer-key-0123456789', reader: 'schema-reader-key-0123456789' };
const ITEMS = '/v1/table/shop%24items';

const rows = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: from + i, text: `row ${from + i}`, vector: [Math.sin(from + i), Math.cos(from + i), 0.5, 1] }));

/** A table's rows as plain objects, by id. */
const read = async (table: lancedb.Table) =>
  (await table.query().select(['id', 'text']).toArray()).map((r) => ({ id: r.id, text: r.text })).sort((a, b) => a.id - b.id);
const metadataOf = async (table: lancedb.Table) => Object.fromEntries((await table.schema()).metadata);

interface HistoryEvent {
  type: string;
  transaction_id: string;
  operation: string;
  principal?: string;
  context: Record<string, string>;
  data: { version?: number; operation?: string; branch?: string };
}

/** How many appends reached the server's event store so far (its Prometheus counter). */
async function appends(api: Api): Promise<number> {
  const text = (await api.get('/metrics')).text;
  return Number(/lance_catalog_event_store_append_duration_seconds_count\{outcome="appended"\} (\d+)/.exec(text)?.[1] ?? 0);
}

/**
 * UpdateTableSchemaMetadata with managed versioning: the catalog commits the new version itself,
 * through version/create's own path, and the official client reads it, builds on it and still
 * reads the versions before it.
 */
describe('UpdateTableSchemaMetadata on a local warehouse', () => {
  let server: RunningServer;
  let api: Api;
  let db: lancedb.Connection;
  const clientHeaders = { 'x-api-key': KEYS.writer };

  beforeAll(async () => {
    server = await startServer({
      env: {
        PROPERTIES_MAX_COUNT: '20',
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'schema-admin', sha256: sha256(KEYS.admin), databases: ['*'], level: 'admin' },
          { principal: 'schema-writer', sha256: sha256(KEYS.writer), databases: ['*'], level: 'write' },
          { principal: 'schema-reader', sha256: sha256(KEYS.reader), databases: ['*'], level: 'read' },
        ]),
      },
    });
    api = new Api(server.url, clientHeaders);
    // Namespaces are made by an admin; everything else by a writer.
    expect((await new Api(server.url, { 'x-api-key': KEYS.admin }).post('/v1/namespace/shop/create', {})).status).toBe(200);
    db = await lancedb.connectNamespace('rest', { uri: server.url, headers: clientHeaders });
    const table = await db.createTable('items', rows(0, 100), ['shop']);
    await table.add(rows(100, 20));
    expect(await table.version()).toBe(2);
    table.close();
  });

  afterAll(async () => {
    db?.close();
    await server?.stop();
  });

  it('commits a version with the new schema metadata, recorded like a commit with its own data change', async () => {
    const before = await appends(api);
    const metadata = { owner: 'etl', purpose: 'schema metadata tests', empty: '', 'ünïcode ✓': 'välue' };
    const res = await api.post(`${ITEMS}/schema_metadata/update`, metadata, { 'x-lance-ctx-ticket': 'T-42' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(metadata);
    const transactionId = res.headers.get('x-lance-transaction-id')!;
    expect(transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-lance-ctx-ticket')).toBe('T-42');
    // The commit and its change took one durable write.
    expect((await appends(api)) - before).toBe(1);

    const versions = await api.post(`${ITEMS}/version/list?descending=true`, null);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(versions.body.versions[0].manifest_path).toMatch(/_versions\/18446744073709551612\.manifest$/);

    const events: HistoryEvent[] = (await api.get(`/v1/history/table/shop%24items`)).body.events;
    const [commit, change] = events.slice(-2);
    expect(commit).toMatchObject({ type: 'TableVersionCreated', operation: 'CreateTableVersion', principal: 'schema-writer', context: { ticket: 'T-42' }, data: { version: 3 } });
    expect(change).toMatchObject({
      type: 'TableDataChanged',
      operation: 'UpdateSchemaMetadataTable',
      transaction_id: transactionId,
      principal: 'schema-writer',
      context: { ticket: 'T-42' },
      data: { operation: 'UpdateSchemaMetadata', version: 3 },
    });
    expect(commit.transaction_id).not.toBe(transactionId);
    const tx = await api.post(`/v1/transaction/${transactionId}/describe`, {});
    expect(tx.body).toMatchObject({ status: 'Succeeded', properties: { operation: 'UpdateSchemaMetadataTable' } });

    // Nothing of the commit is left in _versions but the final manifests.
    const location = (await api.post(`${ITEMS}/describe`, {})).body.location as string;
    await waitFor(
      async () => readdirSync(join(location, '_versions')).filter((f) => f.includes('-')),
      (left) => left.length === 0,
      10_000,
    );
    expect(readdirSync(join(location, '_transactions')).some((f) => f.startsWith('2-'))).toBe(true);
  });

  it('is the version the lancedb client opens: its schema holds the metadata, its rows are unchanged', async () => {
    const other = await lancedb.connectNamespace('rest', { uri: server.url, headers: clientHeaders });
    const table = await other.openTable('items', ['shop']);
    expect(await table.version()).toBe(3);
    expect(await metadataOf(table)).toEqual({ owner: 'etl', purpose: 'schema metadata tests', empty: '', 'ünïcode ✓': 'välue' });
    expect(await read(table)).toEqual(rows(0, 120).map(({ id, text }) => ({ id, text })));
    expect((await table.vectorSearch([Math.sin(42), Math.cos(42), 0.5, 1]).limit(1).toArray())[0].id).toBe(42);

    // The version before the change still has its own (empty) metadata and the same rows.
    await table.checkout(2);
    expect(await metadataOf(table)).toEqual({});
    expect(await table.countRows()).toBe(120);
    await table.checkoutLatest();

    const described = await api.post(`${ITEMS}/describe`, { load_detailed_metadata: true });
    expect(described.body.version).toBe(3);
    expect(described.body.schema.metadata).toMatchObject({ owner: 'etl' });
    table.close();
    other.close();
  });

  it('is kept by the client commits built on it', async () => {
    const table = await db.openTable('items', ['shop']);
    await table.add(rows(120, 5));
    expect(await table.version()).toBe(4);
    await table.update({ where: 'id = 0', valuesSql: { text: "'row zero'" } });
    expect(await table.version()).toBe(5);
    expect((await metadataOf(table)).owner).toBe('etl');
    table.close();
    const reopened = await (await lancedb.connectNamespace('rest', { uri: server.url, headers: clientHeaders })).openTable('items', ['shop']);
    expect(await metadataOf(reopened)).toMatchObject({ owner: 'etl', purpose: 'schema metadata tests' });
    expect(await reopened.countRows()).toBe(125);
    reopened.close();
  });

  it('replaces the whole map: an empty one clears it', async () => {
    const res = await api.post(`${ITEMS}/schema_metadata/update`, {});
    expect([res.status, res.body]).toEqual([200, {}]);
    const table = await db.openTable('items', ['shop']);
    expect(await table.version()).toBe(6);
    expect(await metadataOf(table)).toEqual({});
    expect(await table.countRows()).toBe(125);
    await table.checkout(5);
    expect((await metadataOf(table)).owner).toBe('etl');
    table.close();
  });

  it('changes a branch on its own line', async () => {
    expect((await api.post(`${ITEMS}/branches/create`, { name: 'exp' })).status).toBe(200);
    const res = await api.post(`${ITEMS}/schema_metadata/update?branch=exp`, { stage: 'experiment' });
    expect([res.status, res.body]).toEqual([200, { stage: 'experiment' }]);
    const branchVersions = (await api.post(`${ITEMS}/version/list?branch=exp&descending=true`, null)).body.versions;
    expect(branchVersions[0].manifest_path).toContain('/tree/exp/_versions/');
    const branch = await db.openTable('items', ['shop'], { branch: 'exp' });
    expect(await metadataOf(branch)).toEqual({ stage: 'experiment' });
    expect(await branch.countRows()).toBe(125);
    branch.close();
    const main = await db.openTable('items', ['shop']);
    expect(await main.version()).toBe(6);
    expect(await metadataOf(main)).toEqual({});
    main.close();
    const missing = await api.post(`${ITEMS}/schema_metadata/update?branch=nope`, { a: 'b' });
    expect([missing.status, missing.body.code]).toEqual([404, 22]);
  });

  it('answers 404 for a missing table (code 4) or namespace (code 1), 409 code 19 for a table without data', async () => {
    const table = await api.post('/v1/table/shop%24nope/schema_metadata/update', { a: 'b' });
    expect([table.status, table.body.code]).toEqual([404, 4]);
    const namespace = await api.post('/v1/table/nowhere%24items/schema_metadata/update', { a: 'b' });
    expect([namespace.status, namespace.body.code]).toEqual([404, 1]);
    expect((await api.post('/v1/table/shop%24declared/declare', {})).status).toBe(200);
    const declared = await api.post('/v1/table/shop%24declared/schema_metadata/update', { a: 'b' });
    expect([declared.status, declared.body.code]).toEqual([409, 19]);
  });

  it('refuses a body that is not a string map, or one past the property limits, with nothing committed', async () => {
    const versionsBefore = (await api.post(`${ITEMS}/version/list`, null)).body.versions.length;
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    for (const body of ['[1, 2]', '{"a": 1}', '{"a": null}', '{"a": {"b": "c"}}', 'null', '"text"', '{"__proto__": "x"}', JSON.stringify(tooMany)]) {
      const res = await api.post(`${ITEMS}/schema_metadata/update`, body);
      expect([body, res.status, res.body.code]).toEqual([body, 400, 13]);
    }
    expect((await api.post(`${ITEMS}/schema_metadata/update`, JSON.stringify(tooMany))).body.error).toContain('PROPERTIES_MAX_COUNT');
    const noBody = await api.send<any>('POST', `${ITEMS}/schema_metadata/update`, undefined, {});
    expect([noBody.status, noBody.body.code]).toEqual([400, 13]);
    const arrowBody = await api.send<any>('POST', `${ITEMS}/schema_metadata/update`, arrowStream(sampleTable(0, 1)), ARROW_STREAM);
    expect([arrowBody.status, arrowBody.body.code]).toEqual([400, 13]);
    // A map may hold `id` and `context`: they are metadata keys, not the request's.
    const keys = await api.post(`${ITEMS}/schema_metadata/update`, { id: 'not an id', context: 'not a context' });
    expect([keys.status, keys.body]).toEqual([200, { id: 'not an id', context: 'not a context' }]);
    expect((await api.post(`${ITEMS}/version/list`, null)).body.versions.length).toBe(versionsBefore + 1);
  });

  it('needs write access', async () => {
    const reader = new Api(server.url, { 'x-api-key': KEYS.reader });
    const res = await reader.post(`${ITEMS}/schema_metadata/update`, { a: 'b' });
    expect([res.status, res.body.code]).toEqual([403, 15]);
  });
});

/** Without managed versioning clients commit to storage themselves: the catalog has no commit to make. */
describe('UpdateTableSchemaMetadata on an unmanaged table', () => {
  let server: RunningServer;
  let api: Api;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { MANAGED_VERSIONING: 'false' } });
    api = new Api(server.url);
    expect((await api.send('POST', '/v1/table/plain/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
  });
  afterAll(() => server?.stop());

  it('answers 406 code 0 saying why, and writes nothing', async () => {
    const res = await api.post('/v1/table/plain/schema_metadata/update', { a: 'b' });
    expect([res.status, res.body.code]).toEqual([406, 0]);
    expect(res.body.error).toContain('does not use managed versioning');
    const location = (await api.post('/v1/table/plain/describe', {})).body.location as string;
    expect(readdirSync(join(location, '_versions')).filter((f) => f.endsWith('.manifest'))).toHaveLength(1);
  });
});

const BUCKET = 'warehouse';

/** The same commit on an S3 warehouse (Swift): the manifest is read, staged and published as objects. */
describe('UpdateTableSchemaMetadata on an S3 warehouse (Swift)', () => {
  let swift: SwiftServer;
  let server: RunningServer;
  let api: Api;

  const keys = async (prefix: string) =>
    ((await swift.client().send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket(BUCKET);
    server = await startServer({ env: { ...swift.awsEnv(), WAREHOUSE: `s3://${BUCKET}/lance`, CLIENT_STORAGE_OPTIONS: JSON.stringify(swift.clientCredentials()) } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/shop/create', {})).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await swift?.stop();
  });

  it('commits the version on the object store, where the client reads it and builds on it', async () => {
    expect((await api.send('POST', `${ITEMS}/create`, arrowStream(sampleTable(0, 50)), ARROW_STREAM)).status).toBe(200);
    const res = await api.post(`${ITEMS}/schema_metadata/update`, { owner: 'etl', tier: 'gold' });
    expect([res.status, res.body]).toEqual([200, { owner: 'etl', tier: 'gold' }]);
    expect(res.headers.get('x-lance-transaction-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await api.post(`${ITEMS}/version/list?descending=true`, null)).body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    const key = ((await api.post(`${ITEMS}/describe`, {})).body.location as string).slice(`s3://${BUCKET}/`.length);
    // The final manifest is in place and its staging object gone once the commit is answered and copied.
    const manifests = await waitFor(
      () => keys(`${key}/_versions/`),
      (k) => k.every((name) => name.endsWith('.manifest')),
      10_000,
    );
    expect(manifests.filter((k) => k.endsWith('/18446744073709551613.manifest'))).toHaveLength(1);
    expect((await keys(`${key}/_transactions/`)).some((k) => /\/1-[0-9a-f-]{36}\.txn$/.test(k))).toBe(true);

    const db = await lancedb.connectNamespace('rest', { uri: server.url });
    const table = await db.openTable('items', ['shop']);
    expect(await table.version()).toBe(2);
    expect(Object.fromEntries((await table.schema()).metadata)).toEqual({ owner: 'etl', tier: 'gold' });
    expect(await table.countRows()).toBe(50);
    await table.add([{ id: 1000, text: 'added', category: 'apple', labels: ['apple'], vector: Array.from({ length: 8 }, () => 0.5) }]);
    expect(await table.version()).toBe(3);
    table.close();
    const reopened = await db.openTable('items', ['shop']);
    expect(Object.fromEntries((await reopened.schema()).metadata)).toEqual({ owner: 'etl', tier: 'gold' });
    expect(await reopened.countRows()).toBe(51);
    await reopened.checkout(1);
    expect((await reopened.schema()).metadata.size).toBe(0);
    reopened.close();
    db.close();
  });
});
