import { readdir, stat } from 'node:fs/promises';
import { VersionRecord, storePathOf, versionOfManifestName } from '@app/catalog';

/** The committed manifests in a dataset's `_versions/`, oldest first; staging files are ignored. */
export async function listManifestsOnDisk(location: string): Promise<VersionRecord[]> {
  const dir = `${location}/_versions`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const records: VersionRecord[] = [];
  for (const name of names) {
    const parsed = versionOfManifestName(name);
    if (!parsed) continue;
    const info = await stat(`${dir}/${name}`).catch(() => undefined);
    if (!info) continue;
    records.push({
      version: parsed.version,
      manifestPath: `${storePathOf(location)}/_versions/${name}`,
      manifestSize: info.size,
      namingScheme: parsed.scheme,
      timestampMillis: Math.round(info.mtimeMs),
    });
  }
  return records.sort((a, b) => a.version - b.version);
}
