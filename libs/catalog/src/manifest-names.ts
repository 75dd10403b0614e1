import { invalidInput } from './errors';
import { ManifestNamingScheme } from './events';

const U64_MAX = (1n << 64n) - 1n;

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

/**
 * Where the staging manifest must be finalised. The staging file must sit in the table's own
 * `_versions/` directory, so a client cannot make the server copy files from anywhere else.
 */
export function finalManifestPath(
  location: string,
  stagingPath: string,
  version: number,
  scheme: ManifestNamingScheme,
): string {
  const dir = `${storePathOf(location).replace(/\/+$/, '')}/_versions/`;
  const staging = stagingPath.replace(/^\/+/, '');
  const rest = staging.startsWith(dir) ? staging.slice(dir.length) : undefined;
  if (!rest || rest.includes('/') || rest === '.' || rest === '..' || rest.includes('\u0000')) {
    throw invalidInput(
      `manifest_path '${stagingPath}' is not a staging manifest in this table's _versions directory`,
      `expected a file directly under '${dir}'`,
    );
  }
  return dir + finalManifestName(version, scheme);
}

/** Where Lance keeps a branch of the table at `location`: its versions, data and transactions. */
export function branchLocation(location: string, branch: string): string {
  return `${location.replace(/\/+$/, '')}/tree/${branch}`;
}
