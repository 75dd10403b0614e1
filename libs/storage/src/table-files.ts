/** What a listing or a head tells of one stored file. */
export interface FileInfo {
  size: number;
  /** The object store's entity tag; absent on local disks. */
  eTag?: string;
  modifiedMillis: number;
}

/** Picks, from the names of all the files in a directory, those a listing is about. */
export type NameSelector = (names: readonly string[]) => ReadonlySet<string>;

export interface ListedFile extends FileInfo {
  /** The file's name inside the listed directory. */
  name: string;
}

/**
 * The warehouse's own file work on table locations (a local path or an `s3://` URI): everything the
 * catalog reads, writes, copies or deletes itself. Lance reads and writes table data on its own,
 * given the location and its storage options.
 */
export interface TableFiles {
  read(location: string): Promise<Buffer | undefined>;
  readRange(location: string, offset: number, length: number): Promise<Buffer>;
  /**
   * The last `length` bytes (all of a shorter file) and what a head would tell, from one read, so
   * the two describe the same content; undefined when the file does not exist.
   */
  readTail(location: string, length: number): Promise<{ bytes: Buffer; info: FileInfo } | undefined>;
  head(location: string): Promise<FileInfo | undefined>;
  write(location: string, bytes: Uint8Array): Promise<void>;
  /**
   * Copies one file to another name (a server-side copy on object stores); answers the copy's entity
   * tag where the store gives one.
   */
  copy(from: string, to: string): Promise<{ eTag?: string }>;
  /**
   * The files directly inside a directory (no deeper); empty when it does not exist. With `select`,
   * only those it picks from all the directory's names: on a local disk only theirs are read (a
   * stat each), from the same single directory read.
   */
  list(directory: string, select?: NameSelector): Promise<ListedFile[]>;
  /**
   * The names of the files directly inside a directory, without their sizes or times: one listing,
   * where `list` on a local disk also reads each file's attributes. Empty when it does not exist.
   * An unchanged local directory answers the same array again: what is derived from it can be kept.
   */
  names(directory: string): Promise<readonly string[]>;
  remove(location: string): Promise<void>;
  /** Removes a directory and everything under it; answers how many files went. */
  removeTree(directory: string): Promise<number>;
}

/** The store cannot be reached or answers with a server error: retry later (503 code 17). */
export class StorageUnavailableError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'StorageUnavailableError';
  }
}
