import { VersionRecord, versionOfManifestName, versionsDir, versionsDirOf } from '@app/catalog';
import { TableFiles } from '@app/storage';

/**
 * The committed manifests in a dataset's `_versions/`, oldest first; staging files are ignored.
 * With `pick`, only the versions it chooses from all those there (given ascending): on a local
 * disk only their manifests' attributes are read, not every manifest's.
 */
export async function listManifestsOnDisk(files: TableFiles, location: string, pick?: (versions: readonly number[]) => Iterable<number>): Promise<VersionRecord[]> {
  const records: VersionRecord[] = [];
  const select = pick
    ? (names: readonly string[]) => {
        const byVersion = new Map<number, string[]>();
        for (const name of names) {
          const parsed = versionOfManifestName(name);
          if (parsed) byVersion.set(parsed.version, [...(byVersion.get(parsed.version) ?? []), name]);
        }
        const picked = new Set<string>();
        for (const version of pick([...byVersion.keys()].sort((a, b) => a - b))) for (const name of byVersion.get(version) ?? []) picked.add(name);
        return picked;
      }
    : undefined;
  for (const file of await files.list(versionsDir(location), select)) {
    const parsed = versionOfManifestName(file.name);
    if (!parsed) continue;
    records.push({
      version: parsed.version,
      manifestPath: versionsDirOf(location) + file.name,
      manifestSize: file.size,
      namingScheme: parsed.scheme,
      timestampMillis: file.modifiedMillis,
    });
  }
  return records.sort((a, b) => a.version - b.version);
}

/**
 * The versions of the committed manifests in a dataset's `_versions/`, ascending, from their names
 * alone: what a check of which versions exist needs, without reading every manifest's attributes
 * (a stat each on a local disk: tens of milliseconds for a table of thousands of versions).
 */
export async function manifestVersionsOnDisk(files: TableFiles, location: string): Promise<number[]> {
  const versions: number[] = [];
  for (const name of await files.names(versionsDir(location))) {
    const parsed = versionOfManifestName(name);
    if (parsed) versions.push(parsed.version);
  }
  return versions.sort((a, b) => a - b);
}
