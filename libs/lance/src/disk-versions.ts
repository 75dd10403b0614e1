import { VersionRecord, versionOfManifestName, versionsDir, versionsDirOf } from '@app/catalog';
import { TableFiles } from '@app/storage';

/** The committed manifests in a dataset's `_versions/`, oldest first; staging files are ignored. */
export async function listManifestsOnDisk(files: TableFiles, location: string): Promise<VersionRecord[]> {
  const records: VersionRecord[] = [];
  for (const file of await files.list(versionsDir(location))) {
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
