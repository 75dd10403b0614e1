import { randomBytes, randomUUID } from 'node:crypto';
import { TableFiles, Warehouse } from '@app/storage';
import { SwiftServer, startSwift } from '../../../test/support/swift';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { ErrorCode, VersionRecord } from '@app/catalog';
import { ObjectStoreManifestFinaliser } from '../src/object-store-finaliser';
import { manifestFile } from './crafted-manifest';

/**
 * Managed versioning on a store without put-if-absent copies (Swift): the final name is written only
 * once a version is recorded, from the staging manifest the record names, so two replicas racing for
 * one version never both copy, and a recorded version whose process ended before its copy gets it
 * from whoever serves it first.
 */
describe('the object-store manifest finaliser on Swift', () => {
  let swift: SwiftServer;
  let warehouse: Warehouse;
  const table = 's3://finaliser/wh/default/t.lance';
  const finalName = (v: number) => `${(2n ** 64n - 1n - BigInt(v)).toString().padStart(20, '0')}.manifest`;
  const storePath = (uri: string) => uri.slice('s3://finaliser/'.length);

  beforeAll(async () => {
    swift = await startSwift();
    await swift.createBucket('finaliser');
    warehouse = new Warehouse('s3://finaliser/wh', {
      bucket: 'finaliser',
      prefix: 'wh',
      region: swift.region,
      endpoint: swift.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
      serverOptions: swift.storageOptions(),
      clientOptions: {},
      clientOptionsByDatabase: {},
    });
  }, 60_000);
  afterAll(() => swift?.stop());

  async function staged(version: number, bytes: Buffer): Promise<string> {
    const staging = `${table}/_versions/${finalName(version)}-${randomUUID()}`;
    await warehouse.files.write(staging, bytes);
    return staging;
  }

  /** What the catalog records of a deferred copy (see VersionService.finalise). */
  const recordOf = (version: number, final: string, staging: string, eTag?: string): VersionRecord => ({
    version,
    manifestPath: storePath(final),
    namingScheme: 'V2',
    timestampMillis: Date.now(),
    stagingManifest: { path: storePath(staging), ...(eTag ? { eTag } : {}) },
  });

  it('writes nothing under the final name before the version is recorded; the recorded commit alone copies, and its staging manifest goes', async () => {
    const final = `${table}/_versions/${finalName(1)}`;
    const [winnerBytes, loserBytes] = [randomBytes(300), randomBytes(300)];
    const [winnerStaging, loserStaging] = [await staged(1, winnerBytes), await staged(1, loserBytes)];
    // Two replicas found the version free and checked their staging manifests.
    const [winner, loser] = [new ObjectStoreManifestFinaliser(warehouse), new ObjectStoreManifestFinaliser(warehouse)];
    const [winning, losing] = await Promise.all([
      winner.finalise(storePath(winnerStaging), storePath(final), 'synced', table),
      loser.finalise(storePath(loserStaging), storePath(final), 'synced', table),
    ]);
    expect(await warehouse.files.head(final)).toBeUndefined();
    expect(winning).toMatchObject({ size: 300, created: false, deferred: { tableLocation: table } });
    // The event store recorded the winner's; the loser undoes what it prepared: nothing.
    await loser.discard(losing, true);
    await winner.publish(winning);
    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
    await winner.removalsSettled();
    expect(await warehouse.files.head(winnerStaging)).toBeUndefined();
    expect(await warehouse.files.head(loserStaging)).toBeDefined();
  });

  it('makes the final manifest of a recorded version whose process ended before its copy, once, from the record', async () => {
    const final = `${table}/_versions/${finalName(2)}`;
    const bytes = randomBytes(320);
    const staging = await staged(2, bytes);
    const checked = await new ObjectStoreManifestFinaliser(warehouse).finalise(storePath(staging), storePath(final), 'synced', table);
    // The committing process recorded the version and ended: no copy, no publish.
    const files = warehouse.files;
    const heads: string[] = [];
    const counted: TableFiles = Object.assign(Object.create(files), { head: (location: string) => (heads.push(location), files.head(location)) });
    const errors: string[] = [];
    const serving = new ObjectStoreManifestFinaliser(Object.assign(Object.create(warehouse), { files: counted }) as Warehouse, (m) => errors.push(m));
    const record = recordOf(2, final, staging, checked.eTag);
    expect(await serving.repair(record, table)).toBe(true);
    expect((await files.read(final))!.equals(bytes)).toBe(true);
    expect(errors).toEqual([expect.stringContaining('made from its staging manifest')]);
    // Served again, the version is known to be in place: no request to the store.
    heads.length = 0;
    expect(await serving.repair(record, table)).toBe(true);
    expect(heads).toEqual([]);
    // Another process finds it in place with one head, and copies nothing.
    const another = new ObjectStoreManifestFinaliser(warehouse, (m) => errors.push(m));
    expect(await another.repair(record, table)).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it('answers that a recorded version has no manifest when neither its final nor its staging manifest is left', async () => {
    const final = `${table}/_versions/${finalName(3)}`;
    const staging = `${table}/_versions/${finalName(3)}-${randomUUID()}`;
    expect(await new ObjectStoreManifestFinaliser(warehouse).repair(recordOf(3, final, staging), table)).toBe(false);
  });

  it('waits out a store that is down between the record and the copy, before answering', async () => {
    const final = `${table}/_versions/${finalName(8)}`;
    const bytes = randomBytes(280);
    const staging = await staged(8, bytes);
    const finaliser = new ObjectStoreManifestFinaliser(warehouse, () => undefined, 30_000);
    const checked = await finaliser.finalise(storePath(staging), storePath(final), 'synced', table);
    await swift.pause();
    const publishing = finaliser.publish(checked);
    await new Promise((r) => setTimeout(r, 1500));
    await swift.resume();
    await publishing;
    expect((await warehouse.files.read(final))!.equals(bytes)).toBe(true);
  }, 40_000);

  it('replaces a final manifest no record names (a stray copy) with the recorded one', async () => {
    const final = `${table}/_versions/${finalName(9)}`;
    await warehouse.files.write(final, randomBytes(200));
    const ours = randomBytes(200);
    const staging = await staged(9, ours);
    const finaliser = new ObjectStoreManifestFinaliser(warehouse);
    await finaliser.publish(await finaliser.finalise(storePath(staging), storePath(final), 'synced', table));
    expect((await warehouse.files.read(final))!.equals(ours)).toBe(true);
  });

  const foreign = manifestFile({ fragments: [{ files: [{ path: 'a.lance', baseId: 0 }] }], basePaths: [{ id: 0, path: 's3://finaliser/wh/default/other.lance' }] });
  const own = manifestFile({ fragments: [{ files: [{ path: 'a.lance', baseId: 0 }] }], basePaths: [{ id: 0, path: `${table}/tree/dev` }] });
  // Past the 64 KiB the check reads first: its bytes are not kept, and its final manifest is a copy.
  const large = manifestFile({ fragments: Array.from({ length: 1500 }, (_, i) => ({ files: [{ path: `data/${i}-${'x'.repeat(48)}.lance` }] })) });

  it('refuses a manifest that reads another table before copying it', async () => {
    const final = `${table}/_versions/${finalName(4)}`;
    const staging = await staged(4, foreign);
    await expect(new ObjectStoreManifestFinaliser(warehouse).finalise(storePath(staging), storePath(final), 'synced', table)).rejects.toMatchObject({
      code: ErrorCode.InvalidInput,
      message: expect.stringContaining("its base path 0 lies outside this table's location"),
    });
    expect(await warehouse.files.head(final)).toBeUndefined();
  });

  /** The finaliser over the warehouse's files, each read, head and copy it asks for listed. */
  function counting(): { finaliser: ObjectStoreManifestFinaliser; requests: string[] } {
    const files = warehouse.files;
    const requests: string[] = [];
    const counted: TableFiles = Object.assign(Object.create(files), {
      readTail: (location: string, length: number) => (requests.push(`read ${location}`), files.readTail(location, length)),
      head: (location: string) => (requests.push(`head ${location}`), files.head(location)),
      copy: (from: string, to: string) => (requests.push(`copy ${from}`), files.copy(from, to)),
    });
    return { finaliser: new ObjectStoreManifestFinaliser(Object.assign(Object.create(warehouse), { files: counted }) as Warehouse), requests };
  }

  it('reads a staging manifest once and writes the bytes it checked, with no request beside the read and the write', async () => {
    const final = `${table}/_versions/${finalName(7)}`;
    const staging = await staged(7, own);
    const { finaliser, requests } = counting();
    await finaliser.publish(await finaliser.finalise(storePath(staging), storePath(final), 'synced', table));
    expect(requests).toEqual([`read ${staging}`]);
    expect((await warehouse.files.read(final))!.equals(own)).toBe(true);
    await finaliser.removalsSettled();
    expect(await warehouse.files.head(staging)).toBeUndefined();
  });

  it('finalises with a check started before the commit was decided, reading again only for another table location', async () => {
    const final = `${table}/_versions/${finalName(12)}`;
    const staging = await staged(12, own);
    const { finaliser, requests } = counting();
    const checked = finaliser.checkStaging(storePath(staging), table);
    await checked.result;
    expect(requests).toEqual([`read ${staging}`]);
    // The table was declared again elsewhere between the check and the decision: its own read.
    await expect(finaliser.finalise(storePath(staging), storePath(final), 'synced', `${table}-elsewhere`, checked)).rejects.toMatchObject({ code: ErrorCode.InvalidInput });
    expect(requests).toEqual([`read ${staging}`, `read ${staging}`]);
    const manifest = await finaliser.finalise(storePath(staging), storePath(final), 'synced', table, checked);
    expect(requests).toHaveLength(2);
    await finaliser.publish(manifest);
    expect((await warehouse.files.read(final))!.equals(own)).toBe(true);
  });

  it('answers a check started early for a missing or foreign staging manifest as finalising would, and only then', async () => {
    const { finaliser } = counting();
    const missing = finaliser.checkStaging(`${storePath(table)}/_versions/${finalName(13)}-${randomUUID()}`, table);
    const foreignStaging = await staged(14, foreign);
    const refused = finaliser.checkStaging(storePath(foreignStaging), table);
    // Nothing is thrown until a commit finalises with them (a commit refused first never does).
    await new Promise((r) => setTimeout(r, 200));
    await expect(finaliser.finalise(missing.stagingStorePath, storePath(`${table}/_versions/${finalName(13)}`), 'synced', table, missing)).rejects.toMatchObject({
      code: ErrorCode.InvalidInput,
      message: expect.stringContaining('does not exist'),
    });
    await expect(finaliser.finalise(refused.stagingStorePath, storePath(`${table}/_versions/${finalName(14)}`), 'synced', table, refused)).rejects.toMatchObject({
      code: ErrorCode.InvalidInput,
      message: expect.stringContaining("lies outside this table's location"),
    });
  });

  it('copies a staging manifest larger than one read, with no request beside its reads and the copy', async () => {
    const final = `${table}/_versions/${finalName(10)}`;
    const staging = await staged(10, large);
    const { finaliser, requests } = counting();
    await finaliser.publish(await finaliser.finalise(storePath(staging), storePath(final), 'synced', table));
    // The copy's answer carries its tag, the checked one: no second read of either name.
    expect(requests).toEqual([`read ${staging}`, `read ${staging}`, `copy ${staging}`]);
    expect((await warehouse.files.read(final))!.equals(large)).toBe(true);
  });

  it('writes what it checked when the staging manifest is replaced after its check', async () => {
    const final = `${table}/_versions/${finalName(11)}`;
    const staging = await staged(11, own);
    const finaliser = new ObjectStoreManifestFinaliser(warehouse);
    const checked = await finaliser.finalise(storePath(staging), storePath(final), 'synced', table);
    await warehouse.files.write(staging, foreign);
    await finaliser.publish(checked);
    expect((await warehouse.files.read(final))!.equals(own)).toBe(true);
  });

  it('reads and checks the tail of a staging manifest uploaded in parts', async () => {
    const final = `${table}/_versions/${finalName(5)}`;
    const staging = `${table}/_versions/${finalName(5)}-${randomUUID()}`;
    const client = swift.client();
    const Key = storePath(staging);
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: 'finaliser', Key }));
    const part = await client.send(new UploadPartCommand({ Bucket: 'finaliser', Key, UploadId, PartNumber: 1, Body: own }));
    await client.send(new CompleteMultipartUploadCommand({ Bucket: 'finaliser', Key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    expect((await warehouse.files.head(staging))!.eTag).toMatch(/-1"$/);
    const finaliser = new ObjectStoreManifestFinaliser(warehouse);
    await finaliser.publish(await finaliser.finalise(storePath(staging), storePath(final), 'synced', table));
    expect((await warehouse.files.read(final))!.equals(own)).toBe(true);
  });

  it('removes the copy when a staging manifest larger than one read was replaced between its check and its copy, and never serves it', async () => {
    const final = `${table}/_versions/${finalName(6)}`;
    const staging = await staged(6, large);
    const errors: string[] = [];
    const finaliser = new ObjectStoreManifestFinaliser(warehouse, (m) => errors.push(m));
    const checked = await finaliser.finalise(storePath(staging), storePath(final), 'synced', table);
    // The client that owns the staging name rewrites it, to read another table, after its check.
    await warehouse.files.write(staging, foreign);
    await finaliser.publish(checked);
    expect(await warehouse.files.head(final)).toBeUndefined();
    expect(errors).toEqual([expect.stringContaining('was not made')]);
    expect(await new ObjectStoreManifestFinaliser(warehouse).repair(recordOf(6, final, staging, checked.eTag), table)).toBe(false);
    expect(await warehouse.files.head(final)).toBeUndefined();
  });
});
