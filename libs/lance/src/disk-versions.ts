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
        const { versions, namesOf } = manifestNames(names);
        const picked = new Set<string>();
        for (const version of pick(versions)) for (const name of namesOf.get(version) ?? []) picked.add(name);
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

interface ManifestNames {
  /** Ascending. */
  versions: readonly number[];
  namesOf: ReadonlyMap<number, readonly string[]>;
}

/** Each listing of names parsed: an unchanged local directory answers the same array (TableFiles.names). */
const parsedNames = new WeakMap<readonly string[], ManifestNames>();

/** The committed manifests' versions among a directory's names, and the names of each. */
function manifestNames(names: readonly string[]): ManifestNames {
  const known = parsedNames.get(names);
  if (known) return known;
  const namesOf = new Map<number, string[]>();
  for (const name of names) {
    const parsed = versionOfManifestName(name);
    if (!parsed) continue;
    const same = namesOf.get(parsed.version);
    if (same) same.push(name);
    else namesOf.set(parsed.version, [name]);
  }
  const parsed = { versions: Object.freeze([...namesOf.keys()].sort((a, b) => a - b)), namesOf };
  if (Object.isFrozen(names)) parsedNames.set(names, parsed);
  return parsed;
}

/**
 * The versions of the committed manifests in a dataset's `_versions/`, ascending, from their names
 * alone: what a check of which versions exist needs, without reading every manifest's attributes
 * (a stat each on a local disk: tens of milliseconds for a table of thousands of versions). While
 * the directory is unchanged, the same array each time.
 */
export async function manifestVersionsOnDisk(files: TableFiles, location: string): Promise<readonly number[]> {
  return manifestNames(await files.names(versionsDir(location))).versions;
}

/**
 * The names of each committed version's manifest in a dataset's `_versions/`, by version: which
 * versions are there, looked up without a search. While the directory is unchanged, the same map.
 */
export async function manifestNamesOnDisk(files: TableFiles, location: string): Promise<ReadonlyMap<number, readonly string[]>> {
  return manifestNames(await files.names(versionsDir(location))).namesOf;
}
