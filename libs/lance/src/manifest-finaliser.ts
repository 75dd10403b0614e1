import { constants } from 'node:fs';
import { copyFile, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CatalogError, ErrorCode, invalidInput } from '@app/catalog';
import { Warehouse } from './warehouse';

/**
 * Managed versioning: the client writes a staging manifest, the catalog copies it to its final
 * `_versions/` name before the version is recorded, so a version record always has its manifest.
 */
export class ManifestFinaliser {
  constructor(private readonly warehouse: Warehouse) {}

  /** Put-if-not-exists copy, fsynced; an identical final file (a retry) counts as done. */
  async finalise(stagingStorePath: string, finalStorePath: string): Promise<{ manifestSize: number; created: boolean }> {
    const staging = this.local(stagingStorePath);
    const final = this.local(finalStorePath);
    let size: number;
    try {
      size = (await stat(staging)).size;
    } catch {
      throw invalidInput(`staging manifest '${stagingStorePath}' does not exist`, 'Write the staging manifest before creating the version.');
    }
    try {
      await copyFile(staging, final, constants.COPYFILE_EXCL);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const [a, b] = await Promise.all([readFile(staging), readFile(final)]);
      if (!a.equals(b)) {
        throw new CatalogError(ErrorCode.ConcurrentModification, `another manifest was already committed as '${finalStorePath}'`);
      }
      return { manifestSize: size, created: false };
    }
    // The file's content and its name in the directory, both durable before the version is recorded.
    await Promise.all([fsync(final), fsync(dirname(final))]);
    return { manifestSize: size, created: true };
  }

  /** Removes a final manifest this process created, when the version it backs was not recorded. */
  async discard(finalStorePath: string): Promise<void> {
    await unlink(this.local(finalStorePath)).catch(() => undefined);
  }

  private local(storePath: string): string {
    const path = `/${storePath.replace(/^\/+/, '')}`;
    if (path.includes('\u0000') || path.split('/').includes('..') || !this.warehouse.contains(path)) {
      throw invalidInput(`manifest path '${storePath}' is outside the warehouse`);
    }
    return path;
  }
}

async function fsync(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
