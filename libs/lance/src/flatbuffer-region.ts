import { ByteBuffer } from 'flatbuffers';

/**
 * The bytes of one flatbuffer (an Arrow message's metadata, a file's footer) inside a larger body,
 * read without trusting them. The flatbuffers runtime follows offsets and vector lengths as
 * written; apache-arrow then loops over and allocates for whatever length a vector claims. Each
 * method here checks that what it follows stays inside the region before anything reads it, so
 * apache-arrow's own generated accessors can then be used on a checked table. Slots are the
 * vtable offsets of the Arrow format's schema files (Schema.fbs, Message.fbs, File.fbs), the same
 * numbers apache-arrow's generated classes read.
 */
export class FlatbufferRegion {
  constructor(
    readonly bb: ByteBuffer,
    readonly start: number,
    readonly end: number,
    private readonly fail: (problem: string) => Error,
  ) {}

  /** The root table (a uoffset at the region's start). */
  root(): number {
    return this.table(this.follow(this.start));
  }

  /** Checks the table at `pos`: its vtable and its own bytes lie inside the region. */
  table(pos: number): number {
    if (pos < this.start || pos + 4 > this.end) throw this.fail('points outside its message');
    const vtable = pos - this.bb.readInt32(pos);
    if (vtable < this.start || vtable + 4 > this.end) throw this.fail('has a table whose layout lies outside its message');
    const vtableLength = this.bb.readUint16(vtable);
    const objectLength = this.bb.readUint16(vtable + 2);
    if (vtableLength < 4 || vtableLength % 2 !== 0 || vtable + vtableLength > this.end || objectLength < 4 || pos + objectLength > this.end) {
      throw this.fail('has a table that runs past its message');
    }
    return pos;
  }

  /** The position of a table's field, or 0 when it is absent. */
  field(table: number, slot: number): number {
    const vtable = table - this.bb.readInt32(table);
    if (slot >= this.bb.readUint16(vtable)) return 0;
    const offset = this.bb.readUint16(vtable + slot);
    if (offset === 0) return 0;
    if (offset >= this.bb.readUint16(vtable + 2)) throw this.fail('has a field outside its table');
    return table + offset;
  }

  /** The table a field refers to, checked, or 0 when the field is absent. */
  subTable(table: number, slot: number): number {
    const at = this.field(table, slot);
    return at === 0 ? 0 : this.table(this.follow(at));
  }

  /** A vector field: where its elements start and how many it claims, once they are known to fit. */
  vector(table: number, slot: number, elementSize: number, what: string): { at: number; length: number } {
    const field = this.field(table, slot);
    if (field === 0) return { at: 0, length: 0 };
    const at = this.follow(field);
    if (at + 4 > this.end) throw this.fail(`has ${what} outside its message`);
    const length = this.bb.readUint32(at);
    if (length * elementSize > this.end - at - 4) {
      throw this.fail(`claims ${length} ${what}, more than its ${this.end - this.start} bytes of metadata can hold`);
    }
    return { at: at + 4, length };
  }

  /** The `i`-th table of a vector of tables, checked. */
  tableIn(vector: { at: number }, i: number): number {
    return this.table(this.follow(vector.at + 4 * i));
  }

  /** Where the uoffset stored at `at` leads. */
  private follow(at: number): number {
    if (at < this.start || at + 4 > this.end) throw this.fail('points outside its message');
    return at + this.bb.readUint32(at);
  }
}
