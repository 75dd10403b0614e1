import { randomBytes, randomUUID } from 'node:crypto';
import { Warehouse } from '@app/storage';
import { SwiftServer, startSwift } from '../../../test/support/swift';
import { ObjectStoreManifestFinaliser } from '../src/object-store-finaliser';

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
    await winner.finalise(storePath(winnerStaging), storePath(final));
    // The loser's copy had been decided before it saw the winner's: it lands over it.
    const copied = await warehouse.files.copy(loserStaging, final);
    const losing = { path: final, staging: loserStaging, size: copied.size, eTag: copied.eTag, created: true };
    expect((await warehouse.files.read(final))!.equals(loserBytes)).toBe(true);

    await loser.discard(losing, true, winnerBytes.length);

    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
    expect(errors).toEqual([expect.stringContaining("the recorded commit's manifest was copied back")]);
  });

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
      winnerBytes.length,
    );
    expect((await warehouse.files.read(final))!.equals(winnerBytes)).toBe(true);
    expect(errors).toEqual([]);
  });

  it('refuses a commit over a copy no commit recorded while it is young, and replaces it once older than the grace period', async () => {
    const final = `${table}/_versions/${finalName(4)}`;
    // A replica copied its staging manifest to the final name and was killed before recording the version.
    await warehouse.files.write(final, randomBytes(200));
    const ours = randomBytes(200);
    const staging = await staged(4, ours);
    const errors: string[] = [];
    const finaliser = new ObjectStoreManifestFinaliser(warehouse, 500, (m) => errors.push(m));
    // Young, it may be a racing commit about to be recorded.
    await expect(finaliser.finalise(storePath(staging), storePath(final))).rejects.toMatchObject({ code: 14 });
    expect((await warehouse.files.read(final))!.equals(ours)).toBe(false);

    await new Promise((r) => setTimeout(r, 2600));
    const finalised = await finaliser.finalise(storePath(staging), storePath(final));
    expect(finalised.created).toBe(true);
    expect((await warehouse.files.read(final))!.equals(ours)).toBe(true);
    expect(errors).toEqual([expect.stringContaining('whose commit was never recorded')]);
  });

  it('removes its own copy when no commit recorded the version', async () => {
    const final = `${table}/_versions/${finalName(3)}`;
    const staging = await staged(3, randomBytes(100));
    const finalised = await new ObjectStoreManifestFinaliser(warehouse).finalise(storePath(staging), storePath(final));
    await new ObjectStoreManifestFinaliser(warehouse).discard(finalised, false);
    expect(await warehouse.files.head(final)).toBeUndefined();
  });
});
