import { ByteBuffer } from 'flatbuffers';
import { Block } from 'apache-arrow/fb/block';
import { Buffer as BufferRef } from 'apache-arrow/fb/buffer';
import { Date as DateType } from 'apache-arrow/fb/date';
import { Decimal } from 'apache-arrow/fb/decimal';
import { FieldNode } from 'apache-arrow/fb/field-node';
import { FixedSizeBinary } from 'apache-arrow/fb/fixed-size-binary';
import { FloatingPoint } from 'apache-arrow/fb/floating-point';
import { Int } from 'apache-arrow/fb/int';
import { Interval } from 'apache-arrow/fb/interval';
import { Message } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { RecordBatch } from 'apache-arrow/fb/record-batch';
import { Time } from 'apache-arrow/fb/time';
import { Type } from 'apache-arrow/fb/type';
import { invalidInput } from '@app/catalog';
import { FlatbufferRegion } from './flatbuffer-region';

/** How large an Arrow IPC body's structure may be (ARROW_MAX_FIELDS, ARROW_MAX_DEPTH, ARROW_MAX_NODES, ARROW_MAX_DICTIONARY_BATCHES). */
export interface ArrowLimits {
  maxFields: number;
  maxDepth: number;
  maxNodes: number;
  maxDictionaryBatches: number;
}

/** What the check learnt of a body on its way, without decoding any of its data. */
export interface ArrowIpcSummary {
  /** Whether it holds a schema (a stream's first message, a file's footer). */
  schema: boolean;
  /** The rows of its record batches. */
  rows: number;
  /** Its dictionary batches, deltas included. */
  dictionaryBatches: number;
}

const CONTINUATION = -1;
const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // ARROW1
/** Rows a batch may claim beyond one bit of its body per row: a batch of Null columns has no body at all. */
const ROWS_WITHOUT_BYTES = 65_536;

// Slots of Message.fbs, Schema.fbs and File.fbs (the numbers apache-arrow's generated classes read).
const MESSAGE = { header: 8, customMetadata: 12 };
const SCHEMA = { fields: 6, customMetadata: 8, features: 10 };
const FIELD = { name: 4, typeType: 8, type: 10, dictionary: 12, children: 14, customMetadata: 16 };
const DICTIONARY_ENCODING = { indexType: 6 };
const KEY_VALUE = { key: 4, value: 6 };
const RECORD_BATCH = { nodes: 6, buffers: 8, compression: 10 };
const DICTIONARY_BATCH = { data: 6 };
const FOOTER = { schema: 6, dictionaries: 8, recordBatches: 10, customMetadata: 12 };

/** What a batch's field node needs of its buffers, in the order apache-arrow's VectorLoader reads them. */
type Slot = 'validity' | 'offsets32' | 'offsets64' | 'data' | number;

interface Layout {
  /** One entry per field node, in pre-order; undefined when a type's layout is not modelled here (unions, run-end encoding). */
  nodes?: Slot[][];
  fields: number;
}

/**
 * Checks an Arrow IPC body (stream or file) against its own size and the configured limits before
 * apache-arrow decodes it: apache-arrow believes every length the metadata states, so a 296-byte
 * body whose schema claimed 2^31-1 fields made it allocate until the process died. One pass over
 * the messages and their fields, never over the data: O(messages + fields + nodes).
 */
export function checkArrowIpc(bytes: Uint8Array, limits: ArrowLimits, what = 'the request body'): ArrowIpcSummary {
  return new IpcCheck(bytes, limits, what).run();
}

class IpcCheck {
  private readonly bb: ByteBuffer;
  private fields = 0;
  private nodes = 0;
  private layout: Layout = { fields: 0 };
  private readonly summary: ArrowIpcSummary = { schema: false, rows: 0, dictionaryBatches: 0 };

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limits: ArrowLimits,
    private readonly what: string,
  ) {
    this.bb = new ByteBuffer(bytes);
  }

  private fail = (problem: string): Error => invalidInput(`${this.what} is not a usable Arrow IPC stream: ${problem}`);

  run(): ArrowIpcSummary {
    if (this.isFile()) this.file();
    else this.stream(0, this.bytes.length);
    return this.summary;
  }

  private isFile(): boolean {
    return this.bytes.length >= MAGIC.length && MAGIC.every((b, i) => this.bytes[i] === b);
  }

  /** Every message of a stream in [from, to), up to its end-of-stream marker. */
  private stream(from: number, to: number): void {
    let at = from;
    while (at + 4 <= to) {
      const next = this.message(at, to);
      if (next === undefined) return;
      at = next;
    }
  }

  /** The message framed at `at`; where the next one starts, or undefined at the end-of-stream marker. */
  private message(at: number, to: number): number | undefined {
    let length = this.bb.readInt32(at);
    let start = at + 4;
    // Current framing is a continuation marker, then the length; before Arrow 0.15 the length alone.
    if (length === CONTINUATION) {
      if (start + 4 > to) return undefined;
      length = this.bb.readInt32(start);
      start += 4;
    }
    if (length === 0) return undefined;
    if (length < 0 || length > to - start) throw this.fail(`a message's metadata (${length} bytes) runs past the end of the body`);
    const region = new FlatbufferRegion(this.bb, start, start + length, (p) => this.fail(`a message ${p}`));
    const table = region.root();
    const message = new Message().__init(table, this.bb);
    const bodyLength = this.int64(message.bodyLength(), 'a message body length');
    const bodyStart = start + length;
    if (bodyLength > to - bodyStart) throw this.fail(`a message claims a body of ${bodyLength} bytes; ${to - bodyStart} remain`);
    this.keyValues(region, table, MESSAGE.customMetadata);
    const header = region.subTable(table, MESSAGE.header);
    if (header !== 0) {
      switch (message.headerType()) {
        case MessageHeader.Schema:
          this.schema(region, header);
          break;
        case MessageHeader.RecordBatch:
          this.summary.rows += this.recordBatch(region, header, bodyLength, this.layout.nodes);
          break;
        case MessageHeader.DictionaryBatch: {
          // apache-arrow concatenates a dictionary at each delta: their number costs quadratic time.
          if (++this.summary.dictionaryBatches > this.limits.maxDictionaryBatches) {
            throw this.fail(`it holds more than ${this.limits.maxDictionaryBatches} dictionary batches (ARROW_MAX_DICTIONARY_BATCHES)`);
          }
          const data = region.subTable(header, DICTIONARY_BATCH.data);
          if (data !== 0) this.recordBatch(region, data, bodyLength, undefined);
          break;
        }
      }
    }
    return bodyStart + bodyLength;
  }

  /** A file: its footer's schema and blocks, and the message each block points at. */
  private file(): void {
    const n = this.bytes.length;
    if (n < 8 + 4 + MAGIC.length || !MAGIC.every((b, i) => this.bytes[n - MAGIC.length + i] === b)) throw this.fail('an Arrow file without its closing magic');
    const footerLength = this.bb.readInt32(n - MAGIC.length - 4);
    const footerEnd = n - MAGIC.length - 4;
    if (footerLength <= 0 || footerLength > footerEnd - 8) throw this.fail(`a file footer of ${footerLength} bytes does not fit the file`);
    const footerStart = footerEnd - footerLength;
    const region = new FlatbufferRegion(this.bb, footerStart, footerEnd, (p) => this.fail(`the file footer ${p}`));
    const footer = region.root();
    const schema = region.subTable(footer, FOOTER.schema);
    if (schema !== 0) this.schema(region, schema);
    this.keyValues(region, footer, FOOTER.customMetadata);
    for (const slot of [FOOTER.dictionaries, FOOTER.recordBatches]) {
      const blocks = region.vector(footer, slot, 24, 'blocks');
      for (let i = 0; i < blocks.length; i++) {
        const block = new Block().__init(blocks.at + 24 * i, this.bb);
        const offset = this.int64(block.offset(), 'a block offset');
        const end = offset + block.metaDataLength() + this.int64(block.bodyLength(), 'a block body length');
        if (offset < 8 || block.metaDataLength() <= 0 || end > footerStart) throw this.fail('a file block points outside the file');
        this.message(offset, footerStart);
      }
    }
  }

  private schema(region: FlatbufferRegion, schema: number): void {
    this.summary.schema = true;
    const nodes: Slot[][] = [];
    const before = this.fields;
    const fields = region.vector(schema, SCHEMA.fields, 4, 'fields');
    this.count(fields.length);
    let modelled = true;
    for (let i = 0; i < fields.length; i++) modelled = this.field(region, region.tableIn(fields, i), 1, nodes) && modelled;
    this.keyValues(region, schema, SCHEMA.customMetadata);
    region.vector(schema, SCHEMA.features, 8, 'features');
    this.layout = { nodes: modelled ? nodes : undefined, fields: this.fields - before };
  }

  /** One field and its children; whether every type under it has a layout modelled here. */
  private field(region: FlatbufferRegion, field: number, depth: number, nodes: Slot[][]): boolean {
    if (depth > this.limits.maxDepth) throw this.fail(`its schema nests fields deeper than ${this.limits.maxDepth} (ARROW_MAX_DEPTH)`);
    region.vector(field, FIELD.name, 1, 'name bytes');
    this.keyValues(region, field, FIELD.customMetadata);
    const children = region.vector(field, FIELD.children, 4, 'child fields');
    this.count(children.length);
    const type = region.subTable(field, FIELD.type);
    const dictionary = region.subTable(field, FIELD.dictionary);
    if (dictionary !== 0) {
      // A dictionary-encoded field is its indices in a record batch; its children belong to the dictionary.
      const indexType = region.subTable(dictionary, DICTIONARY_ENCODING.indexType);
      nodes.push(['validity', indexType !== 0 ? new Int().__init(indexType, this.bb).bitWidth() : 32]);
      for (let i = 0; i < children.length; i++) this.field(region, region.tableIn(children, i), depth + 1, []);
      return true;
    }
    const slots = type !== 0 ? this.slotsOf(this.typeType(region, field), type) : undefined;
    let modelled = slots !== undefined;
    if (slots) nodes.push(slots);
    for (let i = 0; i < children.length; i++) modelled = this.field(region, region.tableIn(children, i), depth + 1, nodes) && modelled;
    return modelled;
  }

  private typeType(region: FlatbufferRegion, field: number): Type {
    const at = region.field(field, FIELD.typeType);
    return at === 0 ? Type.NONE : this.bb.readUint8(at);
  }

  /** The buffers a node of this type takes, with the bits per row of its values where they are fixed. */
  private slotsOf(type: Type, table: number): Slot[] | undefined {
    switch (type) {
      case Type.Null:
        return [];
      case Type.Bool:
        return ['validity', 1];
      case Type.Int:
        return ['validity', new Int().__init(table, this.bb).bitWidth()];
      case Type.FloatingPoint:
        return ['validity', [16, 32, 64][new FloatingPoint().__init(table, this.bb).precision()] ?? 64];
      case Type.Decimal:
        return ['validity', new Decimal().__init(table, this.bb).bitWidth()];
      case Type.Date:
        return ['validity', new DateType().__init(table, this.bb).unit() === 0 ? 32 : 64];
      case Type.Time:
        return ['validity', new Time().__init(table, this.bb).bitWidth()];
      case Type.Timestamp:
      case Type.Duration:
        return ['validity', 64];
      case Type.Interval:
        return ['validity', [32, 64, 128][new Interval().__init(table, this.bb).unit()] ?? 128];
      case Type.FixedSizeBinary:
        return ['validity', 8 * new FixedSizeBinary().__init(table, this.bb).byteWidth()];
      case Type.Utf8:
      case Type.Binary:
        return ['validity', 'offsets32', 'data'];
      case Type.LargeUtf8:
      case Type.LargeBinary:
        return ['validity', 'offsets64', 'data'];
      case Type.List:
      case Type.Map:
        return ['validity', 'offsets32'];
      case Type.LargeList:
        return ['validity', 'offsets64'];
      case Type.Struct_:
      case Type.FixedSizeList:
        return ['validity'];
      default:
        return undefined;
    }
  }

  /**
   * A record batch's nodes and buffers: counts within the schema's, every buffer inside the body,
   * and, when the schema's layout is known and the body uncompressed, each node's buffers large
   * enough for the rows it claims.
   */
  private recordBatch(region: FlatbufferRegion, batch: number, bodyLength: number, layout: Slot[][] | undefined): number {
    const nodes = region.vector(batch, RECORD_BATCH.nodes, 16, 'field nodes');
    const buffers = region.vector(batch, RECORD_BATCH.buffers, 16, 'buffers');
    const fields = Math.max(this.layout.fields, 1);
    if (nodes.length > fields) throw this.fail(`a batch has ${nodes.length} field nodes for a schema of ${this.layout.fields} fields`);
    if (buffers.length > 3 * fields) throw this.fail(`a batch has ${buffers.length} buffers for a schema of ${this.layout.fields} fields`);
    this.nodes += Math.max(nodes.length, 1);
    if (this.nodes > this.limits.maxNodes) throw this.fail(`its batches hold more than ${this.limits.maxNodes} field nodes in all (ARROW_MAX_NODES)`);
    const rowsAtMost = 8 * bodyLength + ROWS_WITHOUT_BYTES;
    const length = this.int64(new RecordBatch().__init(batch, this.bb).length(), 'a batch length');
    if (length > rowsAtMost) throw this.fail(`a batch claims ${length} rows in a body of ${bodyLength} bytes`);
    const sizes: number[] = [];
    const buffer = new BufferRef();
    for (let i = 0; i < buffers.length; i++) {
      buffer.__init(buffers.at + 16 * i, this.bb);
      const offset = this.int64(buffer.offset(), 'a buffer offset');
      const size = this.int64(buffer.length(), 'a buffer length');
      if (offset + size > bodyLength) throw this.fail(`a buffer (${size} bytes at ${offset}) lies outside its ${bodyLength}-byte body`);
      sizes.push(size);
    }
    const node = new FieldNode();
    const rows: number[] = [];
    const nulls: number[] = [];
    for (let i = 0; i < nodes.length; i++) {
      node.__init(nodes.at + 16 * i, this.bb);
      const n = this.int64(node.length(), 'a node length');
      const nullCount = this.int64(node.nullCount(), 'a null count');
      if (n > rowsAtMost) throw this.fail(`a column claims ${n} rows in a body of ${bodyLength} bytes`);
      if (nullCount > n) throw this.fail(`a column claims ${nullCount} nulls in ${n} rows`);
      rows.push(n);
      nulls.push(nullCount);
    }
    if (!layout || layout.length !== nodes.length || region.field(batch, RECORD_BATCH.compression) !== 0) return length;
    let b = 0;
    for (let i = 0; i < layout.length; i++) {
      for (const slot of layout[i]) {
        if (b >= sizes.length) return length;
        const size = sizes[b++];
        const needed =
          slot === 'validity' ? (nulls[i] > 0 ? Math.ceil(rows[i] / 8) : 0)
          : slot === 'offsets32' ? (rows[i] > 0 ? 4 * (rows[i] + 1) : 0)
          : slot === 'offsets64' ? (rows[i] > 0 ? 8 * (rows[i] + 1) : 0)
          : slot === 'data' ? 0
          : Math.ceil((rows[i] * slot) / 8);
        if (size < needed) throw this.fail(`a column claims ${rows[i]} rows, more than its ${size}-byte buffer holds`);
      }
    }
    return length;
  }

  /** custom_metadata: a vector of key/value tables. */
  private keyValues(region: FlatbufferRegion, table: number, slot: number): void {
    const entries = region.vector(table, slot, 4, 'metadata entries');
    for (let i = 0; i < entries.length; i++) {
      const entry = region.tableIn(entries, i);
      region.vector(entry, KEY_VALUE.key, 1, 'key bytes');
      region.vector(entry, KEY_VALUE.value, 1, 'value bytes');
    }
  }

  private count(fields: number): void {
    this.fields += fields;
    if (this.fields > this.limits.maxFields) throw this.fail(`its schema has more than ${this.limits.maxFields} fields (ARROW_MAX_FIELDS)`);
  }

  private int64(value: bigint, what: string): number {
    if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw this.fail(`${what} of ${value} is out of range`);
    return Number(value);
  }
}
