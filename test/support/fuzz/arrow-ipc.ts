/**
 * Where an Arrow IPC stream keeps its counts and sizes. A reader trusts these numbers to size what
 * it allocates, so they are where a mutation does the most harm: a Schema whose `fields` vector
 * claims 2^31-1 entries, a RecordBatch whose buffer claims 2^63 bytes. The walk reads the
 * flatbuffers of each message by the layout of Arrow's Message.fbs and Schema.fbs; whatever it
 * cannot read it leaves out, so it never throws on a damaged stream.
 */
export interface Slot {
  /** Where the number is, from the start of the stream. */
  offset: number;
  width: 4 | 8;
  /** What the number is, as `Table.field`: `Schema.fields.length`, `Buffer.length`. */
  what: string;
}

const CONTINUATION = 0xffffffff;
enum Header {
  Schema = 1,
  DictionaryBatch = 2,
  RecordBatch = 3,
}

class FlatBuffer {
  constructor(
    private readonly bytes: Buffer,
    /** Where the flatbuffer starts within `bytes`. */
    private readonly base: number,
    private readonly end: number,
  ) {}

  private inside(at: number, width: number): boolean {
    return at >= this.base && at + width <= this.end;
  }

  u32(at: number): number | undefined {
    return this.inside(at, 4) ? this.bytes.readUInt32LE(at) : undefined;
  }

  u8(at: number): number | undefined {
    return this.inside(at, 1) ? this.bytes[at] : undefined;
  }

  root(): number | undefined {
    const off = this.u32(this.base);
    return off === undefined ? undefined : this.base + off;
  }

  /** Where field `index` of the table at `table` is, or undefined when it is absent. */
  field(table: number, index: number): number | undefined {
    if (!this.inside(table, 4)) return undefined;
    const vtable = table - this.bytes.readInt32LE(table);
    if (!this.inside(vtable, 4)) return undefined;
    const vtableSize = this.bytes.readUInt16LE(vtable);
    const slot = 4 + 2 * index;
    if (slot + 2 > vtableSize || !this.inside(vtable + slot, 2)) return undefined;
    const rel = this.bytes.readUInt16LE(vtable + slot);
    return rel === 0 ? undefined : table + rel;
  }

  /** What an offset field points at (a table, a vector or a string). */
  deref(table: number, index: number): number | undefined {
    const at = this.field(table, index);
    const off = at === undefined ? undefined : this.u32(at);
    return off === undefined || at === undefined ? undefined : at + off;
  }
}

/** Every count and size the stream's messages hold, message by message. */
export function ipcSlots(bytes: Buffer): Slot[] {
  const slots: Slot[] = [];
  let at = 0;
  for (let guard = 0; guard < 10_000 && at + 8 <= bytes.length; guard++) {
    let lengthAt = at;
    if (bytes.readUInt32LE(at) === CONTINUATION) lengthAt = at + 4;
    const metaLength = bytes.readInt32LE(lengthAt);
    if (metaLength <= 0) break;
    slots.push({ offset: lengthAt, width: 4, what: 'Message.metadata_length' });
    const start = lengthAt + 4;
    const end = Math.min(bytes.length, start + metaLength);
    let bodyLength = 0;
    try {
      bodyLength = walkMessage(new FlatBuffer(bytes, start, end), slots);
    } catch {
      // A damaged message: what was found so far stays.
    }
    at = start + metaLength + bodyLength;
  }
  return slots;
}

function walkMessage(fb: FlatBuffer, slots: Slot[]): number {
  const message = fb.root();
  if (message === undefined) return 0;
  const headerType = fb.u8(fb.field(message, 1) ?? -1);
  const header = fb.deref(message, 2);
  const bodyLengthAt = fb.field(message, 3);
  let bodyLength = 0;
  if (bodyLengthAt !== undefined && fb.u32(bodyLengthAt + 4) !== undefined) {
    slots.push({ offset: bodyLengthAt, width: 8, what: 'Message.bodyLength' });
    bodyLength = fb.u32(bodyLengthAt)!;
  }
  keyValues(fb, message, 4, 'Message', slots);
  if (header === undefined) return bodyLength;
  if (headerType === Header.Schema) walkSchema(fb, header, slots);
  else if (headerType === Header.RecordBatch) walkRecordBatch(fb, header, slots);
  else if (headerType === Header.DictionaryBatch) {
    const data = fb.deref(header, 1);
    if (data !== undefined) walkRecordBatch(fb, data, slots);
  }
  return bodyLength;
}

/** A vector's length, then each element's position (tables: dereferenced; structs: in place). */
function vector(fb: FlatBuffer, table: number, index: number, what: string, slots: Slot[], elementSize = 4, tables = true): number[] {
  const at = fb.deref(table, index);
  const length = at === undefined ? undefined : fb.u32(at);
  if (at === undefined || length === undefined) return [];
  slots.push({ offset: at, width: 4, what: `${what}.length` });
  const out: number[] = [];
  for (let i = 0; i < Math.min(length, 4096); i++) {
    const element = at + 4 + i * elementSize;
    if (!tables) out.push(element);
    else {
      const off = fb.u32(element);
      if (off === undefined) break;
      out.push(element + off);
    }
  }
  return out;
}

function string(fb: FlatBuffer, table: number, index: number, what: string, slots: Slot[]): void {
  const at = fb.deref(table, index);
  if (at !== undefined && fb.u32(at) !== undefined) slots.push({ offset: at, width: 4, what: `${what}.length` });
}

function keyValues(fb: FlatBuffer, table: number, index: number, owner: string, slots: Slot[]): void {
  for (const kv of vector(fb, table, index, `${owner}.custom_metadata`, slots)) {
    string(fb, kv, 0, 'KeyValue.key', slots);
    string(fb, kv, 1, 'KeyValue.value', slots);
  }
}

function walkSchema(fb: FlatBuffer, schema: number, slots: Slot[]): void {
  for (const field of vector(fb, schema, 1, 'Schema.fields', slots)) walkField(fb, field, slots, 0);
  keyValues(fb, schema, 2, 'Schema', slots);
  vector(fb, schema, 3, 'Schema.features', slots, 8, false);
}

function walkField(fb: FlatBuffer, field: number, slots: Slot[], depth: number): void {
  if (depth > 64) return;
  string(fb, field, 0, 'Field.name', slots);
  // The type's first field is its size where it has one: Int.bitWidth, FixedSizeList.listSize,
  // FixedSizeBinary.byteWidth, Decimal.precision.
  const type = fb.deref(field, 3);
  const size = type === undefined ? undefined : fb.field(type, 0);
  if (size !== undefined && fb.u32(size) !== undefined) slots.push({ offset: size, width: 4, what: 'Field.type.size' });
  const dictionary = fb.deref(field, 4);
  if (dictionary !== undefined) {
    const id = fb.field(dictionary, 0);
    if (id !== undefined && fb.u32(id + 4) !== undefined) slots.push({ offset: id, width: 8, what: 'DictionaryEncoding.id' });
  }
  for (const child of vector(fb, field, 5, 'Field.children', slots)) walkField(fb, child, slots, depth + 1);
  keyValues(fb, field, 6, 'Field', slots);
}

function walkRecordBatch(fb: FlatBuffer, batch: number, slots: Slot[]): void {
  const length = fb.field(batch, 0);
  if (length !== undefined && fb.u32(length + 4) !== undefined) slots.push({ offset: length, width: 8, what: 'RecordBatch.length' });
  for (const node of vector(fb, batch, 1, 'RecordBatch.nodes', slots, 16, false)) {
    if (fb.u32(node + 12) === undefined) break;
    slots.push({ offset: node, width: 8, what: 'FieldNode.length' }, { offset: node + 8, width: 8, what: 'FieldNode.null_count' });
  }
  for (const buffer of vector(fb, batch, 2, 'RecordBatch.buffers', slots, 16, false)) {
    if (fb.u32(buffer + 12) === undefined) break;
    slots.push({ offset: buffer, width: 8, what: 'Buffer.offset' }, { offset: buffer + 8, width: 8, what: 'Buffer.length' });
  }
  vector(fb, batch, 4, 'RecordBatch.variadicBufferCounts', slots, 8, false);
}

/** A copy of the stream with the number at `slot` replaced. */
export function withSlot(bytes: Buffer, slot: Slot, value: bigint): Buffer {
  const out = Buffer.from(bytes);
  if (slot.width === 4) out.writeUInt32LE(Number(BigInt.asUintN(32, value)), slot.offset);
  else out.writeBigUInt64LE(BigInt.asUintN(64, value), slot.offset);
  return out;
}

/** A copy of the stream whose Schema claims `count` fields: what made `tableFromIPC` allocate without bound. */
export function withFieldCount(bytes: Buffer, count: number): Buffer {
  const slot = ipcSlots(bytes).find((s) => s.what === 'Schema.fields.length');
  if (!slot) throw new Error('the stream has no Schema message');
  return withSlot(bytes, slot, BigInt(count));
}
