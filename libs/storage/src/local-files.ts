import { mkdir, open, readdir, readFile, rm, stat, unlink, writeFile, copyFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DirectoryNames } from './directory-names';
import { FileInfo, ListedFile, NameSelector, TableFiles } from './table-files';

/** Entries stated per turn of the event loop when a directory is listed. */
const STAT_SLICE = 512;

const missing = (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT';
/** A directory listed that is not there, or is a file: it holds no files. */
const noDirectory = (e: unknown) => missing(e) || (e as NodeJS.ErrnoException).code === 'ENOTDIR';

/** Table files on a local disk (or a file system mounted as one). */
export class LocalFiles implements TableFiles {
  constructor(
    /** The names last read from directories, with what tells whether they still hold. */
    readonly directories = new DirectoryNames(),
  ) {}

  async read(path: string): Promise<Buffer | undefined> {
    return readFile(path).catch((e) => (missing(e) ? undefined : Promise.reject(e)));
  }

  async readRange(path: string, offset: number, length: number): Promise<Buffer> {
    const file = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  }

  async readTail(path: string, length: number): Promise<{ bytes: Buffer; info: FileInfo } | undefined> {
    const file = await open(path, 'r').catch((e) => (missing(e) ? undefined : Promise.reject(e)));
    if (!file) return undefined;
    try {
      const info = await file.stat();
      if (!info.isFile()) return undefined;
      const start = Math.max(0, info.size - length);
      const buffer = Buffer.alloc(info.size - start);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, start);
      return { bytes: buffer.subarray(0, bytesRead), info: { size: start + bytesRead, modifiedMillis: Math.round(info.mtimeMs) } };
    } finally {
      await file.close();
    }
  }

  async head(path: string): Promise<FileInfo | undefined> {
    const info = await stat(path).catch((e) => (missing(e) ? undefined : Promise.reject(e)));
    return info?.isFile() ? { size: info.size, modifiedMillis: Math.round(info.mtimeMs) } : undefined;
  }

  async write(path: string, bytes: Uint8Array): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }

  async copy(from: string, to: string): Promise<{ eTag?: string }> {
    await mkdir(dirname(to), { recursive: true });
    await copyFile(from, to);
    return {};
  }

  /**
   * Names are read from the pool, each entry's stat on the main thread: a stat of a name just read
   * touches only the page cache (a few µs), where each one through libuv's pool cost a hop there and
   * back (measured: a listing of 150 manifests, as the maintenance planner makes after commits, took
   * about 6 ms of CPU one stat at a time through the pool). In slices, so that a directory of many
   * thousands of files lets requests in between.
   */
  async list(directory: string, select?: NameSelector): Promise<ListedFile[]> {
    let names: string[];
    if (select) {
      // The selector is offered files only, as `names` gives them.
      const all = await this.names(directory);
      const picked = select(all);
      names = all.filter((name) => picked.has(name));
    } else {
      names = await readdir(directory).catch((e) => (noDirectory(e) ? [] : Promise.reject(e)));
    }
    const listed: ListedFile[] = [];
    for (let from = 0; from < names.length; from += STAT_SLICE) {
      if (from > 0) await new Promise((r) => setImmediate(r));
      for (const name of names.slice(from, from + STAT_SLICE)) {
        const info = statSync(`${directory}/${name}`, { throwIfNoEntry: false });
        if (info?.isFile()) listed.push({ name, size: info.size, modifiedMillis: Math.round(info.mtimeMs) });
      }
    }
    return listed;
  }

  /**
   * The directory's entries as read, with their types: no file is stated (an unknown type counts as
   * a file); kept from one call to the next while the directory is unchanged (DirectoryNames).
   */
  async names(directory: string): Promise<readonly string[]> {
    return this.directories.read(directory).catch((e) => (noDirectory(e) ? [] : Promise.reject(e)));
  }

  async remove(path: string): Promise<void> {
    await unlink(path).catch((e) => (missing(e) ? undefined : Promise.reject(e)));
  }

  async removeTree(directory: string): Promise<number> {
    const count = await countFiles(directory);
    await rm(directory, { recursive: true, force: true });
    return count;
  }
}

async function countFiles(directory: string): Promise<number> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  let n = 0;
  for (const entry of entries) n += entry.isDirectory() ? await countFiles(`${directory}/${entry.name}`) : 1;
  return n;
}
