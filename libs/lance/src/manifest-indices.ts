import { Reader } from 'protobufjs/minimal';
import { MalformedManifestError } from './manifest-references';

/** An index a manifest lists: its name, and the uuid naming its folder under `_indices/`. */
export interface ManifestIndex {
  name: string;
  uuid: string;
}

/** `i64 position | u16 major | u16 minor | "LANC"`. */
const FOOTER = 16;

/**
 * The indexes a whole manifest file lists, read as Lance reads them (`lance.table` protos): the
 * manifest's index_section (field 6) is the file offset of a length-prefixed IndexSection, whose
 * indices (field 1) are IndexMetadata with uuid (1, a UUID message holding bytes in field 1) and
 * name (3).
 */
export function manifestIndices(file: Uint8Array): ManifestIndex[] {
  if (file.length < FOOTER || String.fromCharCode(...file.subarray(file.length - 4)) !== 'LANC') throw new MalformedManifestError('not a Lance manifest');
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const position = Number(view.getBigInt64(file.length - FOOTER, true));
  let section: number | undefined;
  const manifest = Reader.create(prefixed(view, file, position));
  while (manifest.pos < manifest.len) {
    const tag = manifest.uint32();
    if (tag === 6 << 3) section = Number(manifest.uint64());
    else manifest.skipType(tag & 7);
  }
  if (section === undefined) return [];
  const indices: ManifestIndex[] = [];
  const r = Reader.create(prefixed(view, file, section));
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag !== ((1 << 3) | 2)) {
      r.skipType(tag & 7);
      continue;
    }
    const end = r.uint32() + r.pos;
    let name = '';
    let uuid = '';
    while (r.pos < end) {
      const field = r.uint32();
      if (field === ((1 << 3) | 2)) uuid = uuidOf(r.bytes());
      else if (field === ((3 << 3) | 2)) name = r.string();
      else r.skipType(field & 7);
    }
    indices.push({ name, uuid });
  }
  return indices;
}

function prefixed(view: DataView, file: Uint8Array, at: number): Uint8Array {
  if (at < 0 || at + 4 > file.length) throw new MalformedManifestError('a section lies outside the file');
  const length = view.getUint32(at, true);
  if (at + 4 + length > file.length) throw new MalformedManifestError('a section runs past the file');
  return file.subarray(at + 4, at + 4 + length);
}

/** A UUID message's bytes (field 1) in the hyphenated form Lance names index folders with. */
function uuidOf(message: Uint8Array): string {
  const r = Reader.create(message);
  let bytes: Uint8Array = new Uint8Array();
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === ((1 << 3) | 2)) bytes = r.bytes();
    else r.skipType(tag & 7);
  }
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
