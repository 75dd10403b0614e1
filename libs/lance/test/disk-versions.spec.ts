import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finalManifestName, versionsDir, versionsDirOf } from '@app/catalog';
import { DirectoryNames, LocalFiles } from '@app/storage';
import { listManifestsOnDisk, manifestVersionsOnDisk } from '../src';

describe("a dataset's committed manifests on disk", () => {
  const location = join(mkdtempSync(join(tmpdir(), 'disk-versions-')), 't.lance');
  const dir = versionsDir(location);
  const files = new LocalFiles();

  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    for (const version of [10, 2, 1]) writeFileSync(join(dir, finalManifestName(version, 'V2')), `v${version}`);
    writeFileSync(join(dir, finalManifestName(3, 'V1')), 'v3');
    // A staging manifest, another file, and a directory with a manifest's name: none is a version.
    writeFileSync(join(dir, `${finalManifestName(4, 'V2')}-00000000-0000-4000-8000-000000000004`), 'staging');
    writeFileSync(join(dir, 'notes.txt'), '');
    mkdirSync(join(dir, finalManifestName(5, 'V2')));
  });

  it('names the versions from the file names alone, oldest first', async () => {
    expect(await manifestVersionsOnDisk(files, location)).toEqual([1, 2, 3, 10]);
  });

  it('finds the same versions as the listing that reads each manifest', async () => {
    expect((await listManifestsOnDisk(files, location)).map((r) => r.version)).toEqual(await manifestVersionsOnDisk(files, location));
  });

  it('reads the attributes of the versions picked from all those there, and of no other manifest', async () => {
    const seen: number[][] = [];
    const picked = await listManifestsOnDisk(files, location, (versions) => {
      seen.push([...versions]);
      return [2, 10, 7];
    });
    expect(seen).toEqual([[1, 2, 3, 10]]);
    expect(picked).toEqual([
      { version: 2, manifestPath: `${versionsDirOf(location)}${finalManifestName(2, 'V2')}`, manifestSize: 2, namingScheme: 'V2', timestampMillis: expect.any(Number) },
      { version: 10, manifestPath: `${versionsDirOf(location)}${finalManifestName(10, 'V2')}`, manifestSize: 3, namingScheme: 'V2', timestampMillis: expect.any(Number) },
    ]);
    // A manifest's name whose stat fails (a link to itself) fails a whole listing, not one that leaves it out.
    const other = join(location, '..', 'looping.lance');
    mkdirSync(versionsDir(other), { recursive: true });
    writeFileSync(join(versionsDir(other), finalManifestName(1, 'V2')), 'v1');
    symlinkSync(finalManifestName(2, 'V2'), join(versionsDir(other), finalManifestName(2, 'V2')));
    await expect(listManifestsOnDisk(files, other)).rejects.toThrow(/ELOOP/);
    expect((await listManifestsOnDisk(files, other, (versions) => versions.slice(0, 1))).map((r) => r.version)).toEqual([1]);
  });

  it('answers the same versions, parsed once, while _versions/ is unchanged, and the new ones once it changes', async () => {
    const settled = join(location, '..', 'settled.lance');
    mkdirSync(versionsDir(settled), { recursive: true });
    writeFileSync(join(versionsDir(settled), finalManifestName(1, 'V2')), 'v1');
    // A clock an hour ahead: the directory just written looks settled to it.
    const settledFiles = new LocalFiles(new DirectoryNames({ now: () => Date.now() + 3_600_000 }));
    const first = await manifestVersionsOnDisk(settledFiles, settled);
    expect(first).toEqual([1]);
    expect(await manifestVersionsOnDisk(settledFiles, settled)).toBe(first);
    writeFileSync(join(versionsDir(settled), finalManifestName(2, 'V2')), 'v2');
    expect(await manifestVersionsOnDisk(settledFiles, settled)).toEqual([1, 2]);
  });

  it('finds none in a dataset without a _versions directory', async () => {
    expect(await manifestVersionsOnDisk(files, join(location, '..', 'never.lance'))).toEqual([]);
  });
});
