import { mkdirSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { invalidInput } from '@app/catalog';

/** The boundary every table location must stay inside (DESIGN invariant 6). */
export class Warehouse {
  readonly root: string;

  constructor(root: string) {
    mkdirSync(root, { recursive: true });
    this.root = realpathSync(resolve(root));
  }

  databaseRoot(database: string): string {
    return `${this.root}/${database}`;
  }

  contains(absPath: string): boolean {
    const p = normalize(absPath);
    return p === this.root || p.startsWith(this.root + sep);
  }

  /** A client-supplied location as an absolute path inside the warehouse, symlinks resolved. */
  async resolveClientLocation(location: string): Promise<string> {
    if (location.includes('\u0000')) throw invalidInput('location contains a NUL byte');
    let path: string;
    if (/^file:\/\//i.test(location)) {
      try {
        path = fileURLToPath(location);
      } catch {
        throw invalidInput(`location '${location}' is not a valid file:// URI`);
      }
    } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
      throw invalidInput(`location '${location}' uses a storage scheme this catalog does not serve; use a path inside the warehouse`);
    } else {
      path = location;
    }
    if (!isAbsolute(path)) throw invalidInput(`location '${location}' must be an absolute path inside the warehouse '${this.root}'`);
    const normalised = normalize(path).replace(/\/+$/, '');
    if (!this.contains(normalised) || normalised === this.root) {
      throw invalidInput(`location '${location}' is outside the warehouse '${this.root}'`);
    }
    const real = await realOfNearestExisting(normalised);
    if (!this.contains(real)) throw invalidInput(`location '${location}' leads outside the warehouse through a symlink`);
    return normalised;
  }
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
