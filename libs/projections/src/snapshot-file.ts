import { createHash } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { endianness } from 'node:os';
import { dirname } from 'node:path';
import { StateImage } from '@app/catalog';

const MAGIC = 'lance-catalog-snapshot';
/**
 * Raise it whenever the image or what `evolve` makes of an event changes: a snapshot of another
 * version is ignored, and the state is folded from the log instead.
 */
export const SNAPSHOT_VERSION = 7;

/** What a snapshot says about itself, on its first line. */
export interface SnapshotHeader {
  magic: string;
  version: number;
  endianness: string;
  database: string;
  /** The last event folded into it, and that event's id: a log replaced since has another id there. */
  revision: number;
  eventId: string;
  sections: Array<[name: string, bytes: number]>;
  sha256: string;
}

const SECTIONS = ['json', 'versionColumn', 'uuidWords', 'codes', 'startedAt'] as const;
/** How much work runs between two turns of the event loop while a snapshot is encoded. */
const SLICE_BYTES = 4 << 20;
const SLICE_TABLES = 2000;

export interface SnapshotWriteStats {
  bytes: number;
  /** The longest stretch the encoding kept the event loop busy. */
  longestStepMs: number;
}

/**
 * Writes the image to `file` atomically: a temporary file in the same directory, fsynced, then
 * renamed over the old one (and the directory fsynced), so a reader sees the old snapshot or the
 * new one, never half of one. The encoding yields to the event loop between slices.
 */
export async function writeSnapshotFile(
  file: string,
  meta: { database: string; eventId: string },
  image: StateImage,
): Promise<SnapshotWriteStats> {
  const steps = stepTimer();
  const { versionColumn, tables, namespaces, revision, purges, grants, webhooks } = image;
  const { uuidWords, codes, startedAt, ...transactionRest } = image.transactions;
  // The JSON section in pieces: one string of every table would be one long, blocking encode.
  const json = [
    Buffer.from(
      `{"revision":${revision},"namespaces":${JSON.stringify(namespaces)},"transactions":${JSON.stringify(transactionRest)},"purges":${JSON.stringify(purges)},${grants ? `"grants":${JSON.stringify(grants)},` : ''}${webhooks ? `"webhooks":${JSON.stringify(webhooks)},` : ''}"tables":[`,
    ),
  ];
  for (let i = 0; i < tables.length; i += SLICE_TABLES) {
    json.push(Buffer.from((i ? ',' : '') + tables.slice(i, i + SLICE_TABLES).map((t) => JSON.stringify(t)).join(',')));
    await steps.pause();
  }
  json.push(Buffer.from(']}'));
  const sections = [json, [bytesOf(versionColumn)], [bytesOf(uuidWords)], [bytesOf(codes)], [bytesOf(startedAt)]];
  const hash = createHash('sha256');
  for (const chunk of sections.flat()) {
    for (let at = 0; at < chunk.length; at += SLICE_BYTES) {
      hash.update(chunk.subarray(at, at + SLICE_BYTES));
      await steps.pause();
    }
  }
  const header: SnapshotHeader = {
    magic: MAGIC,
    version: SNAPSHOT_VERSION,
    endianness: endianness(),
    database: meta.database,
    revision,
    eventId: meta.eventId,
    sections: SECTIONS.map((name, i) => [name, sections[i].reduce((n, b) => n + b.length, 0)]),
    sha256: hash.digest('hex'),
  };
  // What follows waits on the disk in libuv's threads; it does not hold the event loop.
  const longestStepMs = steps.longest();
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const handle = await open(temp, 'w');
  let bytes = 0;
  try {
    for (const chunk of [Buffer.from(`${JSON.stringify(header)}\n`), ...sections.flat()]) {
      for (let at = 0; at < chunk.length; ) {
        const { bytesWritten } = await handle.write(chunk, at, Math.min(chunk.length - at, SLICE_BYTES));
        at += bytesWritten;
        bytes += bytesWritten;
      }
    }
    await handle.sync();
  } catch (e) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw e;
  }
  await handle.close();
  await rename(temp, file);
  await syncDirectory(dirname(file));
  return { bytes, longestStepMs };
}

/** A snapshot read back and checked, or why it cannot be used. */
export type SnapshotRead = { header: SnapshotHeader; image: StateImage } | { unusable: string };

/** Reads and checks a snapshot: a missing, foreign, older, truncated or damaged file is unusable. */
export async function readSnapshotFile(file: string, database: string): Promise<SnapshotRead> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    return { unusable: (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no snapshot' : `unreadable: ${(e as Error).message}` };
  }
  const newline = bytes.indexOf(10);
  if (newline < 0) return { unusable: 'no header' };
  let header: SnapshotHeader;
  try {
    header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as SnapshotHeader;
  } catch {
    return { unusable: 'damaged header' };
  }
  if (header?.magic !== MAGIC) return { unusable: 'not a catalog snapshot' };
  if (header.version !== SNAPSHOT_VERSION) return { unusable: `snapshot version ${header.version}, this server reads ${SNAPSHOT_VERSION}` };
  if (header.endianness !== endianness()) return { unusable: `written on a ${header.endianness} machine` };
  if (header.database !== database) return { unusable: `snapshot of database '${header.database}'` };
  if (!Array.isArray(header.sections) || header.sections.map((s) => s?.[0]).join() !== SECTIONS.join()) return { unusable: 'unexpected sections' };
  const lengths = header.sections.map((s) => s[1]);
  if (lengths.some((n) => !Number.isSafeInteger(n) || n < 0) || lengths.reduce((a, b) => a + b, 0) !== bytes.length - newline - 1) {
    return { unusable: 'truncated or extended' };
  }
  const sections: Buffer[] = [];
  let at = newline + 1;
  for (const n of lengths) {
    sections.push(bytes.subarray(at, at + n));
    at += n;
  }
  const hash = createHash('sha256');
  for (const s of sections) hash.update(s);
  if (hash.digest('hex') !== header.sha256) return { unusable: 'checksum mismatch' };
  try {
    const json = JSON.parse(sections[0].toString('utf8'));
    const image: StateImage = {
      revision: json.revision,
      namespaces: json.namespaces,
      tables: json.tables,
      purges: json.purges,
      ...(json.grants ? { grants: json.grants } : {}),
      ...(json.webhooks ? { webhooks: json.webhooks } : {}),
      versionColumn: new Float64Array(alignedCopy(sections[1])),
      transactions: {
        ...json.transactions,
        uuidWords: new Uint32Array(alignedCopy(sections[2])),
        codes: new Uint32Array(alignedCopy(sections[3])),
        startedAt: new Float64Array(alignedCopy(sections[4])),
      },
    };
    if (image.revision !== header.revision) return { unusable: 'revision differs from its header' };
    return { header, image };
  } catch (e) {
    return { unusable: `damaged body: ${(e as Error).message}` };
  }
}

function bytesOf(array: Float64Array | Uint32Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

function alignedCopy(bytes: Buffer): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  return copy;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    // Some file systems refuse to fsync a directory; the rename is still atomic there.
  } finally {
    await handle.close();
  }
}

function stepTimer() {
  let longest = 0;
  let since = performance.now();
  return {
    async pause() {
      longest = Math.max(longest, performance.now() - since);
      await new Promise((r) => setImmediate(r));
      since = performance.now();
    },
    longest: () => Math.max(longest, performance.now() - since),
  };
}
