import { randomBytes, randomUUID } from 'node:crypto';
import { TableFiles, Warehouse } from '@app/storage';
import { SwiftServer, startSwift } from '../../../test/support/swift';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { ErrorCode } from '@app/catalog';
import { ObjectStoreManifestFinaliser } from '../src/object-store-finaliser';
import { manifestFile } from './crafted-manifest';

/**
 * Two replicas finalising one version on a store without put-if-absent copies (Swift): the one whose
 * version the event store records must end with its manifest under the final name, whichever copy
 * landed last and even when the winner's process is gone before it can check.
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

  it("puts the recorded commit's manifest back when the losing copy landed last and the winner never checks", async () => {
    const final = `${table}/_versions/${finalName(1)}`;
    const [winnerBytes, loserBytes] = [randomBytes(300), randomBytes(300)];
    const [winnerStaging, loserStaging] = [await staged(1, winnerBytes), await staged(1, loserBytes)];
    const errors: string[] = [];
    const [winner, loser] = [new ObjectStoreManifestFinaliser(warehouse, 60_000), new ObjectStoreManifestFinaliser(warehouse, 60_000, (m) => errors.push(m))];
    // Both replicas found the version free; the winner copied and was recorded, then its process died.
    await winner.finalise(storePath(winnerStaging), storePath(final), 'synced', table);
    // The loser's copy had been decided before it saw the winner's: it lands over it.
    const copied = await warehouse.files.copy(loserStaging, final);
    const losing = { path: final, staging: loserStaging, size: copied.size, eTag: copied.eTag, created: true };
    expect((await warehouse.files.read(final))!.equals(loserBytes)).toBe(true);

    await loser.discard(losing, true, { size: winnerBytes.length });

    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
    expect(errors).toEqual([expect.stringContaining("the recorded commit's manifest was copied back")]);
  });

  it("puts the recorded commit's manifest back when other losers' staging manifests are of the same size", async () => {
    const final = `${table}/_versions/${finalName(11)}`;
    const [winnerBytes, loserBytes, otherBytes] = [randomBytes(256), randomBytes(256), randomBytes(256)];
    const [winnerStaging, loserStaging] = [await staged(11, winnerBytes), await staged(11, loserBytes)];
    await staged(11, otherBytes);
    const winning = await new ObjectStoreManifestFinaliser(warehouse, 60_000).finalise(storePath(winnerStaging), storePath(final), 'synced', table);
    const copied = await warehouse.files.copy(loserStaging, final);
    const errors: string[] = [];
    await new ObjectStoreManifestFinaliser(warehouse, 60_000, (m) => errors.push(m)).discard(
      { path: final, staging: loserStaging, size: copied.size, eTag: copied.eTag, created: true },
      true,
      { size: winnerBytes.length, eTag: winning.eTag },
    );
    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
    expect(errors).toEqual([expect.stringContaining("the recorded commit's manifest was copied back")]);
  });

  it("puts its manifest back when a loser's copy lands after the grace period, while the store was down at that check", async () => {
    const final = `${table}/_versions/${finalName(12)}`;
    const [winnerBytes, loserBytes] = [randomBytes(300), randomBytes(300)];
    const [winnerStaging, loserStaging] = [await staged(12, winnerBytes), await staged(12, loserBytes)];
    // The last look well after the loser's copy below, however slow the machine is to get there.
    const lastCheckMs = 8000;
    const started = Date.now();
    const winner = new ObjectStoreManifestFinaliser(warehouse, 200, () => undefined, lastCheckMs);
    winner.release(await winner.finalise(storePath(winnerStaging), storePath(final), 'synced', table));
    // The store is down when the grace period's check comes, and comes back.
    await swift.pause();
    await new Promise((r) => setTimeout(r, 600));
    await swift.resume();
    // A loser that stalled between its check and its copy lands its copy after that check.
    await new Promise((r) => setTimeout(r, 800));
    await warehouse.files.copy(loserStaging, final);
    expect(Date.now() - started).toBeLessThan(lastCheckMs);
    // The winner's staging manifest goes only after its last look, which put its manifest back.
    while ((await warehouse.files.head(winnerStaging)) !== undefined && Date.now() - started < 25_000) await new Promise((r) => setTimeout(r, 200));
    expect(await warehouse.files.head(winnerStaging)).toBeUndefined();
    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
  }, 40_000);

  it("leaves the final object alone when it already holds the recorded commit's manifest", async () => {
    const final = `${table}/_versions/${finalName(2)}`;
    const [loserBytes, winnerBytes] = [randomBytes(400), randomBytes(400)];
    const loserStaging = await staged(2, loserBytes);
    const winnerStaging = await staged(2, winnerBytes);
    // The loser copied first; the winner's copy landed over it.
    const copied = await warehouse.files.copy(loserStaging, final);
    await warehouse.files.copy(winnerStaging, final);
    const errors: string[] = [];
    await new ObjectStoreManifestFinaliser(warehouse, 60_000, (m) => errors.push(m)).discard(
      { path: final, staging: loserStaging, size: copied.size, eTag: copied.eTag, created: true },
      true,
      { size: winnerBytes.length },
    );
    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
    expect(errors).toEqual([]);
  });

  it('answers "unavailable, retry" over a copy no commit recorded while it is young, and replaces it once older than the grace period', async () => {
    const final = `${table}/_versions/${finalName(9)}`;
    // A replica copied its staging manifest to the final name and was killed before recording the version.
    await warehouse.files.write(final, randomBytes(200));
    const ours = randomBytes(200);
    const staging = await staged(9, ours);
    const errors: string[] = [];
    const finaliser = new ObjectStoreManifestFinaliser(warehouse, 500, (m) => errors.push(m));
    // Young, it may be a racing commit about to be recorded, or one whose replica died: no version
    // is taken yet, so this is no conflict; a retry learns which (409 once recorded, else it copies).
    await expect(finaliser.finalise(storePath(staging), storePath(final), 'synced', table)).rejects.toMatchObject({ code: 17 });
    expect((await warehouse.files.read(final))!.equals(ours)).toBe(false);

    await new Promise((r) => setTimeout(r, 2600));
    const finalised = await finaliser.finalise(storePath(staging), storePath(final), 'synced', table);
    expect(finalised.created).toBe(true);
    expect((await warehouse.files.read(final))!.equals(ours)).toBe(true);
    expect(errors).toEqual([expect.stringContaining('whose commit was never recorded')]);
  });

  it('removes its own copy when no commit recorded the version', async () => {
    const final = `${table}/_versions/${finalName(3)}`;
    const staging = await staged(3, randomBytes(100));
    const finalised = await new ObjectStoreManifestFinaliser(warehouse).finalise(storePath(staging), storePath(final), 'synced', table);
    await new ObjectStoreManifestFinaliser(warehouse).discard(finalised, false);
    expect(await warehouse.files.head(final)).toBeUndefined();
  });

  const foreign = manifestFile({ fragments: [{ files: [{ path: 'a.lance', baseId: 0 }] }], basePaths: [{ id: 0, path: 's3://finaliser/wh/default/other.lance' }] });
  const own = manifestFile({ fragments: [{ files: [{ path: 'a.lance', baseId: 0 }] }], basePaths: [{ id: 0, path: `${table}/tree/dev` }] });

  it('refuses a manifest that reads another table before copying it', async () => {
    const final = `${table}/_versions/${finalName(4)}`;
    const staging = await staged(4, foreign);
    await expect(new ObjectStoreManifestFinaliser(warehouse).finalise(storePath(staging), storePath(final), 'synced', table)).rejects.toMatchObject({
      code: ErrorCode.InvalidInput,
      message: expect.stringContaining("its base path 0 lies outside this table's location"),
    });
    expect(await warehouse.files.head(final)).toBeUndefined();
  });

  it('reads a staging manifest once, in place of the head it took before, and copies it', async () => {
    const final = `${table}/_versions/${finalName(7)}`;
    const staging = await staged(7, own);
    const files = warehouse.files;
    const reads: string[] = [];
    const counted: TableFiles = Object.assign(Object.create(files), {
      readTail: (location: string, length: number) => (reads.push(location), files.readTail(location, length)),
      head: (location: string) => (reads.push(`head ${location}`), files.head(location)),
    });
    const finaliser = new ObjectStoreManifestFinaliser(Object.assign(Object.create(warehouse), { files: counted }) as Warehouse);
    await finaliser.finalise(storePath(staging), storePath(final), 'synced', table);
    // The copy heads its own result; no second read of either name: the copy kept the checked tag.
    expect(reads).toEqual([staging, `head ${final}`, `head ${final}`]);
    expect((await files.read(final))!.equals(own)).toBe(true);
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
    await new ObjectStoreManifestFinaliser(warehouse).finalise(storePath(staging), storePath(final), 'synced', table);
    expect((await warehouse.files.read(final))!.equals(own)).toBe(true);
  });

  it('removes the copy when the staging object was replaced between its check and its copy', async () => {
    const final = `${table}/_versions/${finalName(6)}`;
    const staging = await staged(6, own);
    // A client that owns the staging name rewrites it while the commit is under way.
    const files = warehouse.files;
    const racing: TableFiles = Object.assign(Object.create(files), {
      copy: async (from: string, to: string) => {
        await files.write(from, foreign);
        return files.copy(from, to);
      },
    });
    const raced = Object.assign(Object.create(warehouse), { files: racing }) as Warehouse;
    await expect(new ObjectStoreManifestFinaliser(raced).finalise(storePath(staging), storePath(final), 'synced', table)).rejects.toMatchObject({
      code: ErrorCode.InvalidInput,
    });
    expect(await warehouse.files.head(final)).toBeUndefined();
  });
});
