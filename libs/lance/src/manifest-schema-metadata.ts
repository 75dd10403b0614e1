import { Reader, Writer } from 'protobufjs/minimal';

/**
 * A new version of a table whose only change is its schema metadata, made from the bytes of the
 * manifest of the version before it, the way Lance itself commits an `UpdateConfig` transaction.
 *
 * A manifest file, as Lance writes it (lance-table's `io/manifest.rs`, `do_write_manifest`):
 *
 *   [ schema dictionaries (legacy v1 data files only) ]
 *   [ u32 length | IndexSection ]          at Manifest.index_section, when the version has indexes
 *   [ u32 length | Transaction ]           at Manifest.transaction_section (the commit's own transaction)
 *   [ u32 length | Manifest ]              at the footer's position
 *   [ i64 position | u16 major | u16 minor | "LANC" ]
 *
 * The new file keeps every byte before the old transaction (dictionaries and the index section stay
 * at the offsets the copied fields name), then the new version's transaction and its manifest, and
 * a footer that keeps the old format version. The manifest message is spliced field by field: every
 * top-level field of the old one is copied as it was encoded, except those a new version of Lance's
 * own sets afresh (`Manifest::new_from_previous` and the commit): version, schema metadata (the
 * change), timestamp, the transaction's file and section, and the two Lance does not inherit
 * (version_aux_data, tag). Field numbers are those of `lance.table.Manifest` (protos/table.proto):
 * version = 3, version_aux_data = 4, schema_metadata = 5 (map<string, bytes>), index_section = 6,
 * timestamp = 7, tag = 8, transaction_file = 12, transaction_section = 21.
 *
 * The transaction is Lance's `lance.table.Transaction` (protos/transaction.proto): read_version = 1,
 * uuid = 2, and the operation `update_config` = 110 holding `schema_metadata_updates` = 8, an
 * `UpdateMap` (update_entries = 1 of `{key = 1, value = 2}`, replace = 2) that replaces the whole map.
 * Lance reads it when a writer that read an older version commits after this one (its conflict
 * check and rebase), so concurrent commits keep working. Lance 12 writes the same message both
 * inline and as `_transactions/<read_version>-<uuid>.txn` (named by `transaction_file`), so this
 * does too.
 */
export interface SchemaMetadataVersion {
  /** The new version's number: the manifest's own version plus one. */
  version: number;
  timestampMillis: number;
  /** The schema metadata of the new version, whole: it replaces the old map. */
  metadata: Record<string, string>;
  /** The transaction's uuid (hyphenated), which also names its file. */
  transactionUuid: string;
}

export interface RewrittenManifest {
  /** The new manifest file. */
  manifest: Buffer;
  /** The transaction's message, as Lance keeps it in `_transactions/`. */
  transaction: Buffer;
  /** Its file name inside the line's `_transactions/`. */
  transactionFile: string;
}

export class ManifestFormatError extends Error {}

const FOOTER = 16;
const MAGIC = Buffer.from('LANC', 'latin1');

const Field = {
  version: 3,
  versionAuxData: 4,
  schemaMetadata: 5,
  indexSection: 6,
  timestamp: 7,
  tag: 8,
  transactionFile: 12,
  transactionSection: 21,
} as const;

/** Fields of the old manifest a new version does not copy. */
const REPLACED = new Set<number>([
  Field.version,
  Field.versionAuxData,
  Field.schemaMetadata,
  Field.timestamp,
  Field.tag,
  Field.transactionFile,
  Field.transactionSection,
]);

const VARINT = 0;
const LEN = 2;
const tag = (field: number, wire: number) => ((field << 3) | wire) >>> 0;

/** One encoded top-level field of a message: `[start, end)` holds its tag and value. */
interface EncodedField {
  field: number;
  wire: number;
  start: number;
  end: number;
}

interface ParsedManifest {
  /** The Manifest message's bytes. */
  message: Uint8Array;
  fields: EncodedField[];
  /** Where the manifest's length prefix sits. */
  position: number;
  /** The footer's last eight bytes: the format version and the magic. */
  formatAndMagic: Uint8Array;
}

/** The manifest message of a manifest file, and its top-level fields. */
function parseManifestFile(file: Uint8Array): ParsedManifest {
  if (file.length < FOOTER + 4) throw new ManifestFormatError('the file is too small to be a Lance manifest');
  if (!MAGIC.equals(file.subarray(file.length - 4))) throw new ManifestFormatError('the file does not end with the Lance magic');
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const position = Number(view.getBigInt64(file.length - FOOTER, true));
  if (position < 0 || position + 4 > file.length - FOOTER) throw new ManifestFormatError('the footer points outside the file');
  const length = view.getUint32(position, true);
  // Lance reads everything from the position to the footer as the message, and checks its length.
  if (position + 4 + length !== file.length - FOOTER) throw new ManifestFormatError('the manifest does not end where the footer starts');
  const message = file.subarray(position + 4, position + 4 + length);
  return { message, fields: fieldsOf(message), position, formatAndMagic: file.subarray(file.length - 8) };
}

function fieldsOf(message: Uint8Array): EncodedField[] {
  const r = Reader.create(message);
  const fields: EncodedField[] = [];
  try {
    while (r.pos < r.len) {
      const start = r.pos;
      const t = r.uint32();
      const field = t >>> 3;
      const wire = t & 7;
      if (field === 0) throw new ManifestFormatError('a field has number 0');
      r.skipType(wire);
      fields.push({ field, wire, start, end: r.pos });
    }
  } catch (e) {
    if (e instanceof ManifestFormatError) throw e;
    throw new ManifestFormatError(`the manifest message does not decode: ${(e as Error).message}`);
  }
  if (r.pos !== r.len) throw new ManifestFormatError('a field runs past the manifest message');
  return fields;
}

/** The last varint value of `field` (prost keeps the last of a repeated scalar), or undefined. */
function varintOf(parsed: ParsedManifest, field: number): number | undefined {
  let value: number | undefined;
  for (const f of parsed.fields) {
    if (f.field !== field || f.wire !== VARINT) continue;
    const r = Reader.create(parsed.message.subarray(f.start, f.end));
    r.uint32();
    value = Number(r.uint64());
  }
  return value;
}

/** The version a manifest file records (Manifest.version). */
export function manifestVersion(file: Uint8Array): number {
  return varintOf(parseManifestFile(file), Field.version) ?? 0;
}

/** The schema metadata a manifest file records, values read as UTF-8 (as Lance's Schema holds them). */
export function readSchemaMetadata(file: Uint8Array): Record<string, string> {
  const parsed = parseManifestFile(file);
  const entries: Array<[string, string]> = [];
  for (const f of parsed.fields) {
    if (f.field !== Field.schemaMetadata || f.wire !== LEN) continue;
    const r = Reader.create(parsed.message.subarray(f.start, f.end));
    r.uint32();
    const end = r.uint32() + r.pos;
    let key = '';
    let value = '';
    while (r.pos < end) {
      const t = r.uint32();
      if (t === tag(1, LEN)) key = r.string();
      else if (t === tag(2, LEN)) value = r.string();
      else r.skipType(t & 7);
    }
    entries.push([key, value]);
  }
  // A later entry of a key wins, as prost builds the map.
  return Object.fromEntries(entries);
}

/**
 * The manifest of the version after the one in `file`, with its schema metadata replaced by
 * `next.metadata`, and the transaction that records the change (see the module's description).
 */
export function schemaMetadataVersion(file: Uint8Array, next: SchemaMetadataVersion): RewrittenManifest {
  const parsed = parseManifestFile(file);
  const readVersion = varintOf(parsed, Field.version) ?? 0;
  if (next.version !== readVersion + 1) {
    throw new ManifestFormatError(`the manifest is of version ${readVersion}, so its next version is ${readVersion + 1}, not ${next.version}`);
  }
  const entries = Object.entries(next.metadata);
  const transaction = encodeTransaction(readVersion, next.transactionUuid, entries);
  const transactionFile = `${readVersion}-${next.transactionUuid}.txn`;

  // Everything before the old transaction is kept at its offsets; the old transaction itself only
  // when something other than the manifest follows it (not a layout Lance writes).
  const oldTransaction = varintOf(parsed, Field.transactionSection);
  const indexSection = varintOf(parsed, Field.indexSection);
  let cut = parsed.position;
  if (oldTransaction !== undefined && oldTransaction + 4 <= parsed.position && (indexSection === undefined || indexSection < oldTransaction)) {
    const length = Buffer.from(file.buffer, file.byteOffset, file.byteLength).readUInt32LE(oldTransaction);
    if (oldTransaction + 4 + length === parsed.position) cut = oldTransaction;
  }
  const transactionSection = cut;
  const manifestPosition = transactionSection + 4 + transaction.length;

  const kept = Buffer.concat(parsed.fields.filter((f) => !REPLACED.has(f.field)).map((f) => parsed.message.subarray(f.start, f.end)));
  const fresh = Writer.create();
  fresh.uint32(tag(Field.version, VARINT)).uint64(next.version);
  for (const [key, value] of entries) fresh.uint32(tag(Field.schemaMetadata, LEN)).fork().uint32(tag(1, LEN)).string(key).uint32(tag(2, LEN)).string(value).ldelim();
  const seconds = Math.floor(next.timestampMillis / 1000);
  const nanos = (next.timestampMillis - seconds * 1000) * 1_000_000;
  fresh.uint32(tag(Field.timestamp, LEN)).fork().uint32(tag(1, VARINT)).int64(seconds);
  if (nanos) fresh.uint32(tag(2, VARINT)).int32(nanos);
  fresh.ldelim();
  fresh.uint32(tag(Field.transactionFile, LEN)).string(transactionFile);
  fresh.uint32(tag(Field.transactionSection, VARINT)).uint64(transactionSection);
  const message = Buffer.concat([kept, fresh.finish()]);

  const footer = Buffer.alloc(FOOTER);
  footer.writeBigInt64LE(BigInt(manifestPosition), 0);
  footer.set(parsed.formatAndMagic, 8);
  const manifest = Buffer.concat([file.subarray(0, cut), lengthPrefix(transaction.length), transaction, lengthPrefix(message.length), message, footer]);
  return { manifest, transaction, transactionFile };
}

function encodeTransaction(readVersion: number, uuid: string, entries: Array<[string, string]>): Buffer {
  const w = Writer.create();
  if (readVersion !== 0) w.uint32(tag(1, VARINT)).uint64(readVersion);
  w.uint32(tag(2, LEN)).string(uuid);
  // update_config { schema_metadata_updates { update_entries..., replace: true } }
  w.uint32(tag(110, LEN)).fork().uint32(tag(8, LEN)).fork();
  // `value` is an optional string: present (even empty) sets the key, absent would remove it.
  for (const [key, value] of entries) w.uint32(tag(1, LEN)).fork().uint32(tag(1, LEN)).string(key).uint32(tag(2, LEN)).string(value).ldelim();
  w.uint32(tag(2, VARINT)).bool(true);
  w.ldelim().ldelim();
  return Buffer.from(w.finish());
}

function lengthPrefix(length: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(length, 0);
  return b;
}
