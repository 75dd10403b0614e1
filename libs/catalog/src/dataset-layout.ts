import { invalidInput } from './errors';
import { ManifestNamingScheme } from './events';
import { withoutTrailingSlashes } from './slashes';

/**
 * Where Lance keeps each part of a dataset, for a local path and an `s3://` location alike: every
 * folder and file name the catalog reads, writes or checks is spelled here and nowhere else.
 *
 *   <location>/_versions/<manifest>        committed manifests (finalManifestName)
 *   <location>/_refs/tags/<tag>.json       tags
 *   <location>/_refs/branches/<name>.json  branch ref files
 *   <location>/tree/<name>/...             a branch: its own _versions, data and transactions
 *   <location>/_hnsw/<name>.{bin,rowids,json}  this server's standalone HNSW graphs
 *   <location>/_indices, _deletions, data  Lance's indexes, deletion files and data files
 *   <location>/_transactions/<read version>-<uuid>.txn  a commit's transaction (Lance's, and the catalog's own commits')
 */
export const DATASET_DIRS = {
  versions: '_versions',
  refs: '_refs',
  tags: '_refs/tags',
  branches: '_refs/branches',
  tree: 'tree',
  hnsw: '_hnsw',
  indices: '_indices',
  deletions: '_deletions',
  data: 'data',
  transactions: '_transactions',
} as const;

const U64_MAX = (1n << 64n) - 1n;
const REF_FILE = '.json';

/** `location` and the parts under it joined with single slashes. */
export function inDataset(location: string, ...parts: string[]): string {
  return [withoutTrailingSlashes(location), ...parts].join('/');
}

/** Where Lance keeps a branch of the table at `location`: its versions, data and transactions. */
export function branchLocation(location: string, branch: string): string {
  return inDataset(location, DATASET_DIRS.tree, branch);
}

/** A line's committed manifests: `<location>/_versions`. */
export function versionsDir(location: string): string {
  return inDataset(location, DATASET_DIRS.versions);
}

/** A committed manifest's path under `location`. */
export function manifestFile(location: string, version: number, scheme: ManifestNamingScheme): string {
  return inDataset(location, DATASET_DIRS.versions, finalManifestName(version, scheme));
}

export function tagRefsDir(location: string): string {
  return inDataset(location, DATASET_DIRS.tags);
}

export function tagRefFile(location: string, tag: string): string {
  return inDataset(location, DATASET_DIRS.tags, `${tag}${REF_FILE}`);
}

export function branchRefsDir(location: string): string {
  return inDataset(location, DATASET_DIRS.branches);
}

export function branchRefFile(location: string, branch: string): string {
  return inDataset(location, DATASET_DIRS.branches, `${branch}${REF_FILE}`);
}

/** The ref name a file in a refs folder holds, or undefined for a file that is no ref. */
export function refNameOf(fileName: string): string | undefined {
  return fileName.endsWith(REF_FILE) ? fileName.slice(0, -REF_FILE.length) : undefined;
}

export function hnswDir(location: string): string {
  return inDataset(location, DATASET_DIRS.hnsw);
}

/** A standalone HNSW index's three files: the graph, its row ids (64-bit, this machine's byte order) and how it was built. */
export function hnswFiles(location: string, name: string): { graph: string; rowIds: string; meta: string } {
  const dir = hnswDir(location);
  return { graph: `${dir}/${name}.bin`, rowIds: `${dir}/${name}.rowids`, meta: `${dir}/${name}.json` };
}

/** The manifest's file name once committed: V2 sorts newest first on an object store. */
export function finalManifestName(version: number, scheme: ManifestNamingScheme): string {
  if (scheme === 'V1') return `${version}.manifest`;
  if (Number.isSafeInteger(version) && version >= 0) return `${u64MaxMinus(version)}.manifest`;
  return `${(U64_MAX - BigInt(version)).toString().padStart(20, '0')}.manifest`;
}

/**
 * 2^64-1 minus a safe integer, in decimal, without BigInt: names are derived again each time a
 * version is read, since the catalog does not store them.
 */
function u64MaxMinus(version: number): string {
  // 2^64-1 = 1844674407 * 10^10 + 3709551615; a safe integer's high part is below 10^6.
  const high = Math.floor(version / 1e10);
  let low = 3709551615 - (version - high * 1e10);
  let borrow = 0;
  if (low < 0) {
    low += 1e10;
    borrow = 1;
  }
  return `${1844674407 - high - borrow}${String(low).padStart(10, '0')}`;
}

/** Reads a committed manifest's version back from its file name; undefined for anything else. */
export function versionOfManifestName(name: string): { version: number; scheme: ManifestNamingScheme } | undefined {
  const m = /^(\d+)\.manifest$/.exec(name);
  if (!m) return undefined;
  if (m[1].length === 20) {
    const version = U64_MAX - BigInt(m[1]);
    if (version >= 0n && version <= BigInt(Number.MAX_SAFE_INTEGER)) return { version: Number(version), scheme: 'V2' };
    return undefined;
  }
  const version = Number(m[1]);
  return Number.isSafeInteger(version) ? { version, scheme: 'V1' } : undefined;
}

/**
 * A table location in the object-store form clients use in manifest paths: relative to the store's
 * root, with no scheme and no leading slash (a local path without its `/`; on S3 the key inside the
 * bucket).
 */
export function storePathOf(location: string): string {
  return location.replace(/^file:\/\//, '').replace(/^s3:\/\/[^/]+\/?/i, '').replace(/^\/+/, '');
}

/** Where a line's committed manifests live, in the object-store form manifest paths use (ends with `/`). */
export function versionsDirOf(location: string): string {
  return `${versionsDir(storePathOf(location))}/`;
}

/**
 * Whether a file name is Lance's name for a staging manifest of `version`: that version's final
 * name, in either naming scheme, then `-` and a suffix.
 */
export function isStagingNameOf(name: string, version: number): boolean {
  return (['V2', 'V1'] as const).some((scheme) => {
    const final = finalManifestName(version, scheme);
    return name.length > final.length + 1 && name.startsWith(`${final}-`);
  });
}

/**
 * Whether `staging` is a staging manifest of the version `final` names, beside it: the same
 * directory (local paths and object keys alike are `/`-separated) and a staging name of that version.
 */
export function isStagingManifestOf(staging: string, final: string): boolean {
  const dir = final.slice(0, final.lastIndexOf('/') + 1);
  const name = staging.slice(dir.length);
  const version = versionOfManifestName(final.slice(dir.length))?.version;
  return version !== undefined && staging.startsWith(dir) && !name.includes('/') && isStagingNameOf(name, version);
}

/**
 * Where the staging manifest must be finalised. The staging file must sit in the table's own
 * `_versions/` directory, so a client cannot make the server copy files from anywhere else, and be
 * named as Lance names a staging manifest of this very version (its final name, in either naming
 * scheme, then `-` and a suffix): a committed manifest of another version, or any other file kept
 * there (`latest_version_hint.json`), would otherwise be recorded as this version's, and the table
 * left unreadable by Lance.
 */
export function finalManifestPath(
  location: string,
  stagingPath: string,
  version: number,
  scheme: ManifestNamingScheme,
): string {
  const dir = versionsDirOf(location);
  const staging = stagingPath.replace(/^\/+/, '');
  const rest = staging.startsWith(dir) ? staging.slice(dir.length) : undefined;
  if (!rest || rest.includes('/') || rest === '.' || rest === '..' || rest.includes('\u0000')) {
    throw invalidInput(
      `manifest_path '${stagingPath}' is not a staging manifest in this table's _versions directory`,
      `expected a file directly under '${dir}'`,
    );
  }
  if (!isStagingNameOf(rest, version)) {
    throw invalidInput(
      `manifest_path '${stagingPath}' is not named as a staging manifest of version ${version}`,
      `Lance names it after the version's final manifest: '${dir}${finalManifestName(version, scheme)}-<uuid>'`,
    );
  }
  return dir + finalManifestName(version, scheme);
}
