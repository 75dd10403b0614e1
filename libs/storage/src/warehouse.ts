import { mkdirSync, realpathSync } from 'node:fs';
import { access, realpath } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, isAbsolute, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { invalidInput, withoutTrailingSlashes } from '@app/catalog';
import type { ObjectStoreSettings, StorageOptions } from '@app/config';
import { LocalFiles } from './local-files';
import { POLICY_SPECIAL_SHOWN, policyPatternCharacter } from './policy-characters';
import { isS3Uri, joinLocation, schemeOf } from './object-uri';
import { S3Files } from './s3-files';
import { TableFiles } from './table-files';

/**
 * The warehouse: the root every table location stays inside (DESIGN invariant 6), the files the
 * catalog handles itself there, and the storage options Lance needs to reach them. The root is a
 * local directory or an `s3://bucket/prefix` on S3 or an S3-compatible store.
 */
export class Warehouse {
  readonly root: string;
  readonly files: TableFiles;
  private readonly s3?: S3Files;

  constructor(
    root: string,
    private readonly objectStore?: ObjectStoreSettings,
  ) {
    if (objectStore) {
      this.root = withoutTrailingSlashes(root);
      this.s3 = new S3Files(objectStore);
      this.files = this.s3;
    } else {
      mkdirSync(root, { recursive: true });
      this.root = realpathSync(resolve(root));
      this.files = new LocalFiles();
    }
  }

  get onObjectStore(): boolean {
    return this.objectStore !== undefined;
  }

  databaseRoot(database: string): string {
    return joinLocation(this.root, database);
  }

  /** Whether a location (path or URI) lies inside the warehouse root (or is the root). */
  contains(location: string): boolean {
    if (this.objectStore) {
      const normalised = normaliseUri(location);
      return normalised !== undefined && (normalised === this.root || normalised.startsWith(`${this.root}/`));
    }
    const p = normalize(location);
    return p === this.root || p.startsWith(this.root + sep);
  }

  /**
   * A location a caller of `database` supplied, confined to that database's own root in the
   * warehouse (symlinks resolved on local disks); a relative one is resolved against that root. Anything else is refused with the same answer,
   * which names only the caller's input and its own root (`$WAREHOUSE/<database>` on a local disk):
   * nothing tells whether the location is
   * another database's, or whether anything is there. A location holding a character a storage
   * policy reads as a pattern is refused first, on every store: credentials vended for it would
   * open every folder the pattern matches.
   */
  async resolveClientLocation(location: string, database: string): Promise<string> {
    if (location.includes('\u0000')) throw invalidInput('location contains a NUL byte');
    // Lance reads a location as a URL: it decodes percent-escapes (`%2F`, `%2e%2e`) and drops a
    // fragment (`#...`) where these checks would read them as they are: the folder it opened would
    // not be the one judged here.
    const read = ['%', '#'].find((c) => location.includes(c));
    if (read) {
      throw invalidInput(`location '${location}' holds '${read}', which Lance reads as part of a URL (an escape, a fragment); name the location without any`);
    }
    // No file system names a folder longer than 255 bytes; the store's keys are bounded as well.
    if (location.split(/[/\\]/).some((segment) => Buffer.byteLength(segment) > 255)) {
      throw invalidInput(`location '${location.slice(0, 300)}${location.length > 300 ? '...' : ''}' holds a folder name longer than 255 bytes`);
    }
    const special = policyPatternCharacter(location);
    if (special !== undefined) {
      throw invalidInput(`location '${location}' holds '${special}', which storage policies read as a pattern; name a location without any of ${POLICY_SPECIAL_SHOWN}`);
    }
    const root = this.databaseRoot(database);
    // A local root is named from the warehouse on, not with the server's own directories.
    const shown = this.objectStore ? root : `$WAREHOUSE/${database}`;
    const outside = () => invalidInput(`location '${location}' is not inside this database's root '${shown}' in the warehouse`);
    // A relative location is the database's: resolved against its root, then held to it like any other.
    const relative = !schemeOf(location) && !isAbsolute(location) && !/^file:/i.test(location);
    if (this.objectStore) {
      if (relative) location = joinLocation(root, location);
      if (!isS3Uri(location)) throw outside();
      const normalised = normaliseUri(location);
      if (normalised === undefined) throw invalidInput(`location '${location}' holds an empty, '.' or '..' segment or a control character`);
      if (!normalised.startsWith(`${root}/`)) throw outside();
      return normalised;
    }
    let path: string;
    if (/^file:\/\//i.test(location)) {
      try {
        path = fileURLToPath(location);
      } catch {
        throw invalidInput(`location '${location}' is not a valid file:// URI`);
      }
    } else if (schemeOf(location)) {
      throw invalidInput(`location '${location}' uses a storage scheme this catalog does not serve; use a path inside the warehouse`);
    } else {
      path = relative ? resolve(root, location) : location;
    }
    if (!isAbsolute(path)) throw invalidInput(`location '${location}' must be a path inside this database's root '${shown}' in the warehouse`);
    const normalised = withoutTrailingSlashes(normalize(path));
    if (!normalised.startsWith(`${root}/`)) throw outside();
    const real = await realOfNearestExisting(normalised);
    if (!real.startsWith(`${root}/`)) throw invalidInput(`location '${location}' leads outside this database's root through a symlink`);
    return normalised;
  }

  /**
   * Lance storage options for a table of `database`: the server's own (credentials included) for
   * this process's connections and its workers, else what clients are handed. Empty on local disks.
   */
  storageOptions(database: string, forService: boolean): StorageOptions {
    if (!this.objectStore) return {};
    if (forService) return { ...this.objectStore.serverOptions };
    return { ...this.objectStore.clientOptions, ...this.objectStore.clientOptionsByDatabase[database] };
  }

  /** The options this process's own Lance connections use. */
  get serverStorageOptions(): StorageOptions {
    return this.objectStore ? { ...this.objectStore.serverOptions } : {};
  }

  /** Answers when the warehouse can be read and written; throws with the reason otherwise. */
  async ping(): Promise<void> {
    if (this.s3 && this.objectStore) return this.s3.ping(this.objectStore.bucket);
    await access(this.root, constants.R_OK | constants.W_OK);
  }

  /**
   * Whether Lance can commit to this store on its own: it commits a version with a conditional PUT
   * (`If-None-Match: *`), which some S3-compatible stores (Swift) refuse. Always true on local disks.
   */
  async supportsConditionalPut(): Promise<boolean> {
    if (!this.s3) return true;
    return this.s3.supportsConditionalPut(joinLocation(this.root, `.conditional-put-probe-${process.pid}-${Date.now()}`));
  }

  close(): void {
    this.s3?.close();
  }
}

/** `s3://bucket/a/b` without a trailing slash, or undefined when a segment is empty, `.` or `..`. */
function normaliseUri(location: string): string | undefined {
  const m = /^s3:\/\/([^/]+)(\/.*)?$/i.exec(location.trim());
  if (!m || /[\u0000-\u001f]/.test(location)) return undefined;
  const segments = withoutTrailingSlashes(m[2] ?? '').split('/').slice(1);
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return ['s3:/', m[1], ...segments].join('/');
}

/** The real path of the deepest existing ancestor, with the missing tail appended. */
async function realOfNearestExisting(path: string): Promise<string> {
  let head = path;
  let tail = '';
  for (;;) {
    try {
      const real = await realpath(head);
      return tail ? `${real}/${tail}` : real;
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      tail = tail ? `${head.slice(parent.length + 1)}/${tail}` : head.slice(parent.length + 1);
      head = parent;
    }
  }
}
