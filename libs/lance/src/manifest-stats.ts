import { open } from 'node:fs/promises';
import { Reader } from 'protobufjs/minimal';
import { finalManifestName } from '@app/catalog';

/**
 * Reads fragment counts straight from a committed manifest, because the Lance client reports live
 * rows only. Field numbers are those of `lance.table.Manifest` (table.proto): fragments = 2;
 * DataFragment.deletion_file = 3, physical_rows = 4; DeletionFile.num_deleted_rows = 4.
 */
export async function manifestStats(location: string, version: number): Promise<{ numFragments: number; numDeletedRows: number } | undefined> {
  for (const scheme of ['V2', 'V1'] as const) {
    const bytes = await readManifestMessage(`${location}/_versions/${finalManifestName(version, scheme)}`);
    if (bytes) return countFragments(bytes);
  }
  return undefined;
}

/** A manifest file ends with `i64 position | u16 major | u16 minor | "LANC"`; the message sits at position, length-prefixed. */
async function readManifestMessage(path: string): Promise<Uint8Array | undefined> {
  const file = await open(path, 'r').catch(() => undefined);
  if (!file) return undefined;
  try {
    const { size } = await file.stat();
    if (size < 16) return undefined;
    const footer = Buffer.alloc(16);
    await file.read(footer, 0, 16, size - 16);
    if (footer.toString('latin1', 12, 16) !== 'LANC') return undefined;
    const position = Number(footer.readBigInt64LE(0));
    const prefix = Buffer.alloc(4);
    await file.read(prefix, 0, 4, position);
    const length = prefix.readUInt32LE(0);
    const message = Buffer.alloc(length);
    await file.read(message, 0, length, position + 4);
    return message;
  } finally {
    await file.close();
  }
}

function countFragments(bytes: Uint8Array): { numFragments: number; numDeletedRows: number } {
  const manifest = Reader.create(bytes);
  let numFragments = 0;
  let numDeletedRows = 0;
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
      const deletion = Reader.create(fragment.bytes());
      while (deletion.pos < deletion.len) {
        const dtag = deletion.uint32();
        if (dtag >>> 3 === 4) numDeletedRows += Number(deletion.uint64());
        else deletion.skipType(dtag & 7);
      }
    }
  }
  return { numFragments, numDeletedRows };
}
