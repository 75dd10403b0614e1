import * as lancedb from '@lancedb/lancedb';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader } from 'protobufjs/minimal';
import { finalManifestName } from '@app/catalog';
import { ManifestFormatError, manifestVersion, readSchemaMetadata, schemaMetadataVersion } from '../src/manifest-schema-metadata';
import { readManifestReferences } from '../src/manifest-references';

const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: from + i, text: `row ${from + i}` }));

/** The latest manifest of a local dataset (V2 names sort newest first) and its version. */
function latestManifest(location: string): { bytes: Buffer; version: number } {
  const names = readdirSync(join(location, '_versions'))
    .filter((f) => f.endsWith('.manifest'))
    .sort();
  const bytes = readFileSync(join(location, '_versions', names[0]));
  return { bytes, version: manifestVersion(bytes) };
}

/** Commits the next version of a plain local dataset the way the catalog's finaliser does: its final name, and its transaction file. */
function commit(location: string, version: number, next: ReturnType<typeof schemaMetadataVersion>): void {
  writeFileSync(join(location, '_transactions', next.transactionFile), next.transaction);
  writeFileSync(join(location, '_versions', finalManifestName(version, 'V2')), next.manifest, { flag: 'wx' });
}

/** The top-level field numbers of a manifest file's message, in order, and where it says its transaction and index sections are. */
function layout(file: Buffer) {
  const position = Number(file.readBigInt64LE(file.length - 16));
  const message = file.subarray(position + 4, position + 4 + file.readUInt32LE(position));
  const r = Reader.create(message);
  const numbers: number[] = [];
  const values = new Map<number, number>();
  while (r.pos < r.len) {
    const tag = r.uint32();
    numbers.push(tag >>> 3);
    if ((tag & 7) === 0) values.set(tag >>> 3, Number(r.uint64()));
    else r.skipType(tag & 7);
  }
  return { position, numbers, version: values.get(3), indexSection: values.get(6), transactionSection: values.get(21) };
}

/**
 * Manifests made by `schemaMetadataVersion` from manifests Lance wrote (@lancedb/lancedb 0.39),
 * read back by Lance itself: the rows, the index and the other versions are untouched, the new
 * version carries the metadata, and a writer that read the version before it still commits.
 */
describe('a schema metadata version made from a Lance manifest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'schema-metadata-'));
  const location = join(dir, 't.lance');
  let db: lancedb.Connection;

  beforeAll(async () => {
    db = await lancedb.connect(dir);
    const table = await db.createTable('t', rows(0, 200));
    await table.createIndex('id');
    await table.add(rows(200, 50));
    table.close();
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the index section and every other field, and writes the transaction before the manifest', () => {
    const { bytes, version } = latestManifest(location);
    const before = layout(bytes);
    expect(before.indexSection).toBeDefined();
    expect(before.transactionSection).toBeGreaterThan(before.indexSection!);
    const next = schemaMetadataVersion(bytes, { version: version + 1, timestampMillis: 1_700_000_000_123, metadata: { owner: 'etl' }, transactionUuid: randomUUID() });
    const after = layout(next.manifest);
    expect(after.version).toBe(version + 1);
    expect(after.indexSection).toBe(before.indexSection);
    // Only the old transaction is cut: what precedes it is the same bytes at the same offsets.
    expect(next.manifest.subarray(0, before.transactionSection!).equals(bytes.subarray(0, before.transactionSection!))).toBe(true);
    expect(after.transactionSection).toBe(before.transactionSection);
    expect(next.manifest.subarray(after.transactionSection! + 4, after.transactionSection! + 4 + next.transaction.length).equals(next.transaction)).toBe(true);
    expect(after.position).toBe(after.transactionSection! + 4 + next.transaction.length);
    expect(next.manifest.subarray(next.manifest.length - 8).equals(bytes.subarray(bytes.length - 8))).toBe(true);
    // Every field the old manifest had, but those a new version sets afresh, is still there.
    const fresh = new Set([3, 4, 5, 7, 8, 12, 21]);
    expect(after.numbers.filter((n) => !fresh.has(n))).toEqual(before.numbers.filter((n) => !fresh.has(n)));
    expect(next.transactionFile).toMatch(new RegExp(`^${version}-[0-9a-f-]{36}\\.txn$`));
    expect(readSchemaMetadata(next.manifest)).toEqual({ owner: 'etl' });
    // The references the catalog checks read the same.
    const refs = (b: Buffer) => readManifestReferences({ bytes: b, offset: 0 });
    expect(refs(next.manifest)).toEqual(refs(bytes));
  });

  it('is read by Lance: the metadata on the new version, rows and index unchanged, the old version as it was', async () => {
    const { bytes, version } = latestManifest(location);
    // A writer that read the version before the change, and commits after it.
    const stale = await db.openTable('t');
    expect(await stale.version()).toBe(version);
    const metadata = { owner: 'etl', empty: '', 'clé ünïcode': 'välue ✓' };
    commit(location, version + 1, schemaMetadataVersion(bytes, { version: version + 1, timestampMillis: Date.now(), metadata, transactionUuid: randomUUID() }));

    const table = await db.openTable('t');
    expect(await table.version()).toBe(version + 1);
    expect(Object.fromEntries((await table.schema()).metadata)).toEqual(metadata);
    expect(await table.countRows()).toBe(250);
    expect(await table.countRows('id >= 190 AND id < 210')).toBe(20);
    expect((await table.listIndices()).map((i) => i.name)).toEqual(['id_idx']);
    expect((await table.query().where('id = 7').toArray()).map((r) => r.text)).toEqual(['row 7']);
    await table.checkout(version);
    expect((await table.schema()).metadata.size).toBe(0);
    table.close();

    // Lance checks the stale writer's append against the change's transaction, and builds on it.
    await stale.add(rows(250, 10));
    expect(await stale.version()).toBe(version + 2);
    stale.close();
    const latest = await db.openTable('t');
    expect(Object.fromEntries((await latest.schema()).metadata)).toEqual(metadata);
    expect(await latest.countRows()).toBe(260);
    latest.close();
  });

  it('replaces the whole map: an empty one clears it', async () => {
    const { bytes, version } = latestManifest(location);
    expect(Object.keys(readSchemaMetadata(bytes))).toContain('owner');
    commit(location, version + 1, schemaMetadataVersion(bytes, { version: version + 1, timestampMillis: Date.now(), metadata: {}, transactionUuid: randomUUID() }));
    const table = await db.openTable('t');
    expect(await table.version()).toBe(version + 1);
    expect((await table.schema()).metadata.size).toBe(0);
    expect(await table.countRows()).toBe(260);
    table.close();
  });

  it('refuses what is not the manifest it should follow', () => {
    const { bytes, version } = latestManifest(location);
    const next = (file: Buffer, v = version + 1) => () => schemaMetadataVersion(file, { version: v, timestampMillis: 0, metadata: {}, transactionUuid: randomUUID() });
    expect(next(bytes, version + 2)).toThrow(ManifestFormatError);
    expect(next(Buffer.from('not a manifest at all, not even close'))).toThrow(ManifestFormatError);
    const broken = Buffer.from(bytes);
    broken.writeBigInt64LE(BigInt(bytes.length), bytes.length - 16);
    expect(next(broken)).toThrow(ManifestFormatError);
  });
});
