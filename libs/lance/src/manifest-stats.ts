import { Reader } from 'protobufjs/minimal';
import { manifestFile } from '@app/catalog';
import { TableFiles } from '@app/storage';

export interface ManifestFragmentCounts {
  numFragments: number;
  numDeletedRows: number;
  /** Fragments with a deletion file (whatever count of rows it declares). */
  numFragmentsWithDeletions: number;
}

/**
 * Reads fragment counts straight from a committed manifest, because the Lance client reports live
 * rows only. Field numbers are those of `lance.table.Manifest` (table.proto): fragments = 2;
 * DataFragment.deletion_file = 3, physical_rows = 4; DeletionFile.num_deleted_rows = 4.
 */
export async function manifestStats(
  files: TableFiles,
  location: string,
  version: number,
): Promise<ManifestFragmentCounts | undefined> {
  for (const scheme of ['V2', 'V1'] as const) {
    const bytes = await readManifestMessage(files, manifestFile(location, version, scheme));
    if (bytes) return countFragments(bytes);
  }
  return undefined;
}

/** A manifest file ends with `i64 position | u16 major | u16 minor | "LANC"`; the message sits at position, length-prefixed. */
async function readManifestMessage(files: TableFiles, path: string): Promise<Uint8Array | undefined> {
  const info = await files.head(path);
  if (!info || info.size < 16) return undefined;
  const footer = await files.readRange(path, info.size - 16, 16);
  if (footer.toString('latin1', 12, 16) !== 'LANC') return undefined;
  const position = Number(footer.readBigInt64LE(0));
  // The message and its length prefix run up to the footer: one read fetches both.
  const tail = await files.readRange(path, position, info.size - 16 - position);
  const length = tail.readUInt32LE(0);
  return tail.subarray(4, 4 + length);
}

function countFragments(bytes: Uint8Array): ManifestFragmentCounts {
  const manifest = Reader.create(bytes);
  let numFragments = 0;
  let numDeletedRows = 0;
  let numFragmentsWithDeletions = 0;
  while (manifest.pos < manifest.len) {
    const tag = manifest.uint32();
    if (tag >>> 3 !== 2) {
      manifest.skipType(tag & 7);
      continue;
    }
    numFragments++;
    const fragment = Reader.create(manifest.bytes());
    while (fragment.pos < fragment.len) {
      const ftag = fragment.uint32();
      if (ftag >>> 3 !== 3) {
        fragment.skipType(ftag & 7);
        continue;
      }
      numFragmentsWithDeletions++;
      const deletion = Reader.create(fragment.bytes());
      while (deletion.pos < deletion.len) {
        const dtag = deletion.uint32();
        if (dtag >>> 3 === 4) numDeletedRows += Number(deletion.uint64());
        else deletion.skipType(dtag & 7);
      }
    }
  }
  return { numFragments, numDeletedRows, numFragmentsWithDeletions };
}

/** What the planner and the expiry read from one committed manifest. */
export interface ManifestSummary {
  /** When Lance wrote it, by the writer's clock (`Manifest.timestamp` = 7): what Lance's own cleanup compares. */
  timestampMillis?: number;
  fragments: number;
  /** Fragments holding fewer than the given number of rows (deleted rows counted). */
  smallFragments: number;
  physicalRows: number;
}

/** Reads a line's committed manifest of `version` (either naming scheme); undefined when it is not there. */
export async function manifestSummary(files: TableFiles, lineLocation: string, version: number, smallFragmentRows: number): Promise<ManifestSummary | undefined> {
  for (const scheme of ['V2', 'V1'] as const) {
    const bytes = await readManifestMessage(files, manifestFile(lineLocation, version, scheme));
    if (bytes) return summarise(bytes, smallFragmentRows);
  }
  return undefined;
}

function summarise(bytes: Uint8Array, smallFragmentRows: number): ManifestSummary {
  const manifest = Reader.create(bytes);
  const summary: ManifestSummary = { fragments: 0, smallFragments: 0, physicalRows: 0 };
  while (manifest.pos < manifest.len) {
    const tag = manifest.uint32();
    if (tag === ((2 << 3) | 2)) {
      const fragment = Reader.create(manifest.bytes());
      let rows = 0;
      while (fragment.pos < fragment.len) {
        const ftag = fragment.uint32();
        if (ftag === 4 << 3) rows = Number(fragment.uint64());
        else fragment.skipType(ftag & 7);
      }
      summary.fragments++;
      summary.physicalRows += rows;
      if (rows < smallFragmentRows) summary.smallFragments++;
    } else if (tag === ((7 << 3) | 2)) {
      const timestamp = Reader.create(manifest.bytes());
      let seconds = 0;
      let nanos = 0;
      while (timestamp.pos < timestamp.len) {
        const ttag = timestamp.uint32();
        if (ttag === 1 << 3) seconds = Number(timestamp.int64());
        else if (ttag === 2 << 3) nanos = timestamp.int32();
        else timestamp.skipType(ttag & 7);
      }
      summary.timestampMillis = seconds * 1000 + Math.floor(nanos / 1e6);
    } else manifest.skipType(tag & 7);
  }
  return summary;
}
