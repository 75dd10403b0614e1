import { CatalogError, ErrorCode, VersionRecord, versionsDir } from '@app/catalog';
import { FileInfo, TableFiles } from '@app/storage';
import { refuseForeignReferences } from './manifest-references';

/** What Lance itself reads first of a manifest; one read holds a whole manifest of that size. */
const TAIL_BYTES = 64 * 1024;

/** What the check's read told of a manifest; `bytes`, the whole of it, when it fits the first read. */
export type CheckedManifest = FileInfo & { bytes?: Buffer };

/**
 * Refuses (400 code 13) the stored manifest at `location` if it references files outside
 * `tableLocation` (see `refuseForeignReferences`). One read of its tail, another only for a manifest
 * larger than that; every check reads one response, so what is checked is one content. Answers what
 * that read told of the file (its bytes too when the read held them all), or undefined when there is
 * no file.
 */
export async function checkStoredManifest(files: TableFiles, location: string, tableLocation: string, name: string): Promise<CheckedManifest | undefined> {
  let length = TAIL_BYTES;
  for (let read = 0; read < 3; read++) {
    const tail = await files.readTail(location, length);
    if (!tail) return undefined;
    const needs = refuseForeignReferences({ bytes: tail.bytes, offset: tail.info.size - tail.bytes.length }, tableLocation, name);
    if (!needs) return tail.info.size <= TAIL_BYTES && tail.bytes.length === tail.info.size ? { ...tail.info, bytes: tail.bytes } : tail.info;
    length = tail.info.size - needs.needsFrom;
  }
  throw new CatalogError(ErrorCode.ConcurrentModification, `manifest '${name}' kept changing while it was read`);
}

/**
 * RegisterTable imports every version found at a location: each of their manifests is checked, a
 * few at a time.
 */
export async function checkStoredManifests(files: TableFiles, location: string, versions: VersionRecord[]): Promise<void> {
  const queue = [...versions];
  const worker = async () => {
    for (let v = queue.shift(); v; v = queue.shift()) {
      const name = v.manifestPath.slice(v.manifestPath.lastIndexOf('/') + 1);
      await checkStoredManifest(files, `${versionsDir(location)}/${name}`, location, v.manifestPath);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
}
