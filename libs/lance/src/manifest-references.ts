import { Reader } from 'protobufjs/minimal';
import { CatalogError, ErrorCode, invalidInput } from '@app/catalog';

/**
 * What a Lance manifest makes a reader open besides the table's own files. Lance resolves a data
 * file, deletion file or index that carries a `base_id` against the manifest's `base_paths` (an
 * absolute path or URI each: how shallow clones and branches read another dataset's files), so a
 * manifest committed through the catalog could otherwise make the server read any location its own
 * credentials reach. Field numbers are those of `lance.table` (protos/table.proto):
 *
 * - Manifest: fragments = 2, index_section = 6 (file offset of an IndexSection), base_paths = 18;
 * - DataFragment: files = 2, deletion_file = 3, external_row_ids = 6,
 *   external_last_updated_at_versions = 8, external_created_at_versions = 10;
 * - DataFile: path = 1, base_id = 7; DeletionFile: base_id = 7; ExternalFile: path = 1;
 * - BasePath: id = 1, is_dataset_root = 3, path = 4;
 * - IndexSection: indices = 1; IndexMetadata: base_id = 9.
 */
export interface ManifestReferences {
  basePaths: Array<{ id: number; path: string }>;
  /** The base path ids the manifest's files name, by what names them ('a data file', 'an index'...). */
  baseIds: Map<string, Set<number>>;
  /** Whether some file path that Lance joins to a directory of the table is absolute, has a scheme or climbs with `..`. */
  escapingPath: boolean;
}

/** Bytes of a manifest file: its tail, from file offset `offset` to the end of the file. */
export interface ManifestTail {
  bytes: Uint8Array;
  offset: number;
}

export type ManifestReading =
  /** Lance refuses a file without its footer, so such a file references nothing. */
  | { kind: 'not-a-manifest' }
  /** The tail does not reach a part the manifest points at: read from `from`. */
  | { kind: 'incomplete'; from: number }
  | { kind: 'manifest'; references: ManifestReferences };

export class MalformedManifestError extends Error {}

/** `i64 position | u16 major | u16 minor | "LANC"`. */
const FOOTER = 16;
const MAGIC = [0x4c, 0x41, 0x4e, 0x43];

/**
 * Reads the references of the manifest whose tail is given, as Lance decodes it: the message at the
 * footer's position (length-prefixed), and the index section at the offset the message names.
 */
export function readManifestReferences(tail: ManifestTail): ManifestReading {
  const { bytes, offset } = tail;
  const size = offset + bytes.length;
  if (bytes.length < FOOTER) return offset > 0 ? { kind: 'incomplete', from: Math.max(0, size - FOOTER) } : { kind: 'not-a-manifest' };
  if (!MAGIC.every((b, i) => bytes[bytes.length - 4 + i] === b)) return { kind: 'not-a-manifest' };
  const position = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigInt64(bytes.length - FOOTER, true);
  if (position < 0n || position > BigInt(size - FOOTER - 4)) throw new MalformedManifestError('the footer points outside the file');
  if (Number(position) < offset) return { kind: 'incomplete', from: Number(position) };
  const references: ManifestReferences = { basePaths: [], baseIds: new Map(), escapingPath: false };
  try {
    const indexSection = readManifest(lengthPrefixed(bytes, Number(position) - offset, bytes.length - FOOTER), references);
    if (indexSection !== undefined) {
      if (indexSection > size - 4) throw new MalformedManifestError('the index section lies outside the file');
      if (indexSection < offset) return { kind: 'incomplete', from: indexSection };
      readIndexSection(lengthPrefixed(bytes, indexSection - offset, bytes.length), references);
    }
  } catch (e) {
    if (e instanceof MalformedManifestError) throw e;
    // protobufjs' Reader throws RangeError (or Error for a bad wire type) past the end of a message.
    throw new MalformedManifestError(String(e));
  }
  return { kind: 'manifest', references };
}

/** The first reason the references leave `tableLocation`, or undefined when none does. */
export function foreignReference(references: ManifestReferences, tableLocation: string): string | undefined {
  const table = storeLocation(tableLocation);
  if (!table) return 'the table has no location a base path could be compared with';
  const declared = new Set<number>();
  for (const { id, path } of references.basePaths) {
    declared.add(id);
    const base = storeLocation(path);
    if (!base || base.store !== table.store || !table.segments.every((s, i) => base.segments[i] === s)) {
      return `its base path ${id} lies outside this table's location`;
    }
  }
  for (const [by, ids] of references.baseIds) {
    for (const id of ids) if (!declared.has(id)) return `${by} names base path ${id}, which the manifest does not declare`;
  }
  if (references.escapingPath) return "a file path in it is absolute, has a scheme or climbs out with '..'";
  return undefined;
}

/**
 * Refuses (400 code 13) a manifest that references a file outside its table's location (a branch's
 * files and the parent lines' it shares lie inside it too). Answers the file offset to read from
 * when the tail does not hold every part of the manifest the check needs.
 */
export function refuseForeignReferences(tail: ManifestTail, tableLocation: string, manifestName: string): { needsFrom: number } | undefined {
  let reading: ManifestReading;
  try {
    reading = readManifestReferences(tail);
  } catch (e) {
    if (!(e instanceof MalformedManifestError)) throw e;
    throw invalidInput(`manifest '${manifestName}' is not a readable Lance manifest`);
  }
  if (reading.kind === 'incomplete') return { needsFrom: reading.from };
  if (reading.kind === 'not-a-manifest') return undefined;
  const reason = foreignReference(reading.references, tableLocation);
  if (reason === undefined) return undefined;
  throw new CatalogError(
    ErrorCode.InvalidInput,
    `manifest '${manifestName}' references files outside this table's location: ${reason}`,
    "A committed manifest may only reference files inside its own table's location (a branch's, inside the same table). " +
      'Shallow clones across tables are not allowed: clone deeply (copy the data) instead.',
  );
}

/**
 * A location as Lance resolves a base path, in the forms a table location takes here: an absolute
 * local path or `file://` URI, or an `s3://bucket/key` URI. Anything else (other schemes, relative
 * or `~` paths, escapes Lance would decode, `.`/`..` steps in a plain path) answers undefined and is
 * refused; a URI's own `..` steps are resolved as Lance's URL parser resolves them.
 */
function storeLocation(path: string): { store: string; segments: string[] } | undefined {
  if (/[\u0000-\u001f\\%?#]/.test(path)) return undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(path)?.[1].toLowerCase();
  if (scheme === undefined) return path.startsWith('/') ? segmentsOf('file', path) : undefined;
  let url: URL;
  try {
    url = new URL(path);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.port) return undefined;
  if (scheme === 'file') return url.host === '' || url.host === 'localhost' ? segmentsOf('file', url.pathname, true) : undefined;
  if (scheme === 's3' && url.host !== '') return segmentsOf(`s3://${url.host}`, url.pathname, true);
  return undefined;
}

function segmentsOf(store: string, path: string, encoded = false): { store: string; segments: string[] } | undefined {
  // A URI's path comes percent-encoded (a space as %20); the input itself holds no '%'.
  const segments = path.split('/').filter((s) => s !== '').map((s) => (encoded ? decodeURIComponent(s) : s));
  return segments.some((s) => s === '.' || s === '..') ? undefined : { store, segments };
}

/** The `length`-prefixed message at `at`, which must end by `end`. */
function lengthPrefixed(bytes: Uint8Array, at: number, end: number): Uint8Array {
  if (at + 4 > end) throw new MalformedManifestError('a message runs past its section');
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(at, true);
  if (at + 4 + length > end) throw new MalformedManifestError('a message runs past its section');
  return bytes.subarray(at + 4, at + 4 + length);
}

/**
 * Tags (field number << 3 | wire type) of the fields read. A known field of another wire type is
 * skipped here, and refused by prost, so Lance would not read that manifest at all.
 */
const Tag = {
  manifestFragments: (2 << 3) | 2,
  manifestIndexSection: 6 << 3,
  manifestBasePaths: (18 << 3) | 2,
  fragmentFiles: (2 << 3) | 2,
  fragmentDeletionFile: (3 << 3) | 2,
  fragmentExternalRowIds: (6 << 3) | 2,
  fragmentExternalUpdatedAt: (8 << 3) | 2,
  fragmentExternalCreatedAt: (10 << 3) | 2,
  filePath: (1 << 3) | 2,
  fileBaseId: 7 << 3,
  basePathId: 1 << 3,
  basePathPath: (4 << 3) | 2,
  sectionIndices: (1 << 3) | 2,
  indexBaseId: 9 << 3,
} as const;

/** The end of the length-prefixed message the reader is at. */
function nested(r: Reader): number {
  const end = r.uint32() + r.pos;
  if (end > r.len) throw new MalformedManifestError('a message runs past its parent');
  return end;
}

function ended(r: Reader, end: number): void {
  if (r.pos !== end) throw new MalformedManifestError('a field runs past its message');
}

function readManifest(message: Uint8Array, refs: ManifestReferences): number | undefined {
  const r = Reader.create(message);
  let indexSection: number | undefined;
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === Tag.manifestFragments) readFragment(r, nested(r), refs);
    else if (tag === Tag.manifestIndexSection) indexSection = Number(r.uint64());
    else if (tag === Tag.manifestBasePaths) readBasePath(r, nested(r), refs);
    else r.skipType(tag & 7);
  }
  ended(r, r.len);
  return indexSection;
}

function readFragment(r: Reader, end: number, refs: ManifestReferences): void {
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === Tag.fragmentFiles) readFile(r, nested(r), refs, 'a data file');
    else if (tag === Tag.fragmentDeletionFile) readFile(r, nested(r), refs, 'a deletion file');
    else if (tag === Tag.fragmentExternalRowIds || tag === Tag.fragmentExternalUpdatedAt || tag === Tag.fragmentExternalCreatedAt) {
      readFile(r, nested(r), refs, undefined);
    } else r.skipType(tag & 7);
  }
  ended(r, end);
}

/**
 * DataFile and ExternalFile keep a path in field 1 (a DeletionFile's path is made of numbers);
 * DataFile and DeletionFile a base id in field 7, which `baseIdOf` names when this kind of file
 * has one.
 */
function readFile(r: Reader, end: number, refs: ManifestReferences, baseIdOf: string | undefined): void {
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === Tag.filePath) {
      const length = r.uint32();
      if (r.pos + length > end) throw new MalformedManifestError('a path runs past its message');
      if (escapes(r.buf, r.pos, r.pos + length)) refs.escapingPath = true;
      r.pos += length;
    } else if (tag === Tag.fileBaseId && baseIdOf !== undefined) noteBaseId(refs, r.uint32(), baseIdOf);
    else r.skipType(tag & 7);
  }
  ended(r, end);
}

/**
 * Every path a BasePath message holds is kept (prost keeps the last of a repeated scalar field; all
 * are checked, which refuses at least what Lance would follow). No path is the empty path.
 */
function readBasePath(r: Reader, end: number, refs: ManifestReferences): void {
  let id = 0;
  const paths: string[] = [];
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === Tag.basePathId) id = r.uint32();
    else if (tag === Tag.basePathPath) paths.push(r.string());
    else r.skipType(tag & 7);
  }
  ended(r, end);
  for (const path of paths.length ? paths : ['']) refs.basePaths.push({ id, path });
}

function readIndexSection(message: Uint8Array, refs: ManifestReferences): void {
  const r = Reader.create(message);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag !== Tag.sectionIndices) {
      r.skipType(tag & 7);
      continue;
    }
    const end = nested(r);
    while (r.pos < end) {
      const t = r.uint32();
      if (t === Tag.indexBaseId) noteBaseId(refs, r.uint32(), 'an index');
      else r.skipType(t & 7);
    }
    ended(r, end);
  }
  ended(r, r.len);
}

function noteBaseId(refs: ManifestReferences, id: number, by: string): void {
  const ids = refs.baseIds.get(by);
  if (ids) ids.add(id);
  else refs.baseIds.set(by, new Set([id]));
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const COLON = 0x3a;
const isLetter = (b: number) => (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a;
const isSchemeByte = (b: number) => isLetter(b) || (b >= 0x30 && b <= 0x39) || b === 0x2b || b === 0x2d || b === DOT;

/**
 * Whether the UTF-8 path in `bytes[start, end)`, which Lance joins to a directory of the table, is
 * absolute, has a scheme or holds a `..` step: none of those stays inside that directory. Read on
 * the bytes, since a manifest holds a path per data file and decoding each cost more than the rest.
 */
function escapes(bytes: Uint8Array, start: number, end: number): boolean {
  if (start === end) return false;
  if (bytes[start] === SLASH || bytes[start] === BACKSLASH) return true;
  // One pass: a scheme is a letter and scheme bytes up to a ':' before any separator.
  let scheme = isLetter(bytes[start]);
  let segment = start;
  for (let i = start + 1; i < end; i++) {
    const b = bytes[i];
    if (b === SLASH || b === BACKSLASH) {
      if (i - segment === 2 && bytes[segment] === DOT && bytes[segment + 1] === DOT) return true;
      segment = i + 1;
      scheme = false;
    } else if (scheme && b === COLON) return true;
    else if (scheme && !isSchemeByte(b)) scheme = false;
  }
  return end - segment === 2 && bytes[segment] === DOT && bytes[segment + 1] === DOT;
}
