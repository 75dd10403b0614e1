import * as arrow from 'apache-arrow';
import { arrowStream, sampleTable } from '../arrow-data';
import { streamWithDeltaDictionaries } from '../arrow-corrupt';
import { ipcSlots } from './arrow-ipc';
import { Rng } from './rng';

/** Valid Arrow IPC streams to start from: the fixture's own shape, and one of many other types. */
export function arrowSeeds(): Buffer[] {
  return [
    arrowStream(sampleTable(100, 3)),
    arrowStream(sampleTable(0, 0)),
    arrowStream(variedTable(4)),
    arrowStream(narrowTable()),
    // Dictionary batches: deltas under ARROW_MAX_DICTIONARY_BATCHES, and past it.
    streamWithDeltaDictionaries(200),
    streamWithDeltaDictionaries(1500),
  ];
}

/** One column of many Arrow types, nulls and a dictionary included. */
export function variedTable(rows: number): arrow.Table {
  // A fixed dictionary id: Arrow numbers dictionaries from a global counter otherwise, and a seed
  // must make the same bytes in every run.
  const utf8Dictionary = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0);
  return new arrow.Table({
    big: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => BigInt(i) * 1_000_000_007n), new arrow.Int64()),
    flag: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => (i % 3 === 0 ? null : i % 2 === 0)), new arrow.Bool()),
    real: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => i / 7), new arrow.Float64()),
    word: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => ['a', 'b', null][i % 3]), utf8Dictionary),
    at: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => 1_700_000_000_000 + i), new arrow.TimestampMillisecond()),
    pair: arrow.vectorFromArray(
      Array.from({ length: rows }, (_, i) => ({ x: i, y: `y${i}` })),
      new arrow.Struct([new arrow.Field('x', new arrow.Int32()), new arrow.Field('y', new arrow.Utf8())]),
    ),
    blob: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => Uint8Array.from([i, i + 1])), new arrow.Binary()),
  });
}

/** Two float columns: the kind of stream the field-count hole was found with. */
export function narrowTable(): arrow.Table {
  return arrow.tableFromArrays({ id: Float64Array.from([1, 2]), x: Float64Array.from([2, 3]) });
}

/** Numbers that make readers misjudge sizes, as 32-bit and 64-bit little-endian words. */
const INTERESTING_32 = [0x7fffffff, 0xffffffff, 0x80000000, 0x7ffffffe, 0, 1, 0xffff, 0x10000, 0x100, 0x40000000, 0xfffffff0, 8, 64, 1024];
const INTERESTING_64 = [0x7fffffffffffffffn, 0xffffffffffffffffn, 0x8000000000000000n, 0x7fffffffn, 0xffffffffn, 0x80000000n, 0n, 1n, 0x100000000n, 1n << 40n];

type ByteMutation = (rng: Rng, bytes: Buffer, other: Buffer) => { bytes: Buffer; note: string };

const alignedOffset = (rng: Rng, bytes: Buffer, width: number) => Math.max(0, Math.floor(rng.int(0, Math.max(0, bytes.length - width)) / 4) * 4);

const MUTATIONS: ReadonlyArray<readonly [number, ByteMutation]> = [
  // The counts and sizes the stream declares: where a reader's trust is spent.
  [6, (rng, bytes) => {
    const slots = ipcSlots(bytes);
    if (!slots.length) return { bytes, note: 'no slot found' };
    const slot = rng.pick(slots);
    const out = Buffer.from(bytes);
    const value = slot.width === 4 ? BigInt(rng.pick(INTERESTING_32)) : rng.pick(INTERESTING_64);
    const written = rng.chance(0.8) ? value : (slot.width === 4 ? BigInt(out.readUInt32LE(slot.offset)) : out.readBigUInt64LE(slot.offset)) + BigInt(rng.pick([-1, 1, 2, 8, -8]));
    if (slot.width === 4) out.writeUInt32LE(Number(BigInt.asUintN(32, written)), slot.offset);
    else out.writeBigUInt64LE(BigInt.asUintN(64, written), slot.offset);
    return { bytes: out, note: `${slot.what} at ${slot.offset} = 0x${BigInt.asUintN(slot.width * 8, written).toString(16)}` };
  }],
  [4, (rng, bytes) => {
    const out = Buffer.from(bytes);
    const wide = rng.chance(0.25) && bytes.length >= 8;
    const at = alignedOffset(rng, bytes, wide ? 8 : 4);
    if (at + (wide ? 8 : 4) > out.length) return { bytes, note: 'too short' };
    const value = wide ? rng.pick(INTERESTING_64) : BigInt(rng.pick(INTERESTING_32));
    if (wide) out.writeBigUInt64LE(value, at);
    else out.writeUInt32LE(Number(value), at);
    return { bytes: out, note: `${wide ? 'u64' : 'u32'} at ${at} = 0x${value.toString(16)}` };
  }],
  [3, (rng, bytes) => {
    const out = Buffer.from(bytes);
    const flips = rng.size(1, 16);
    for (let i = 0; i < flips; i++) {
      const at = rng.int(0, out.length - 1);
      out[at] ^= 1 << rng.int(0, 7);
    }
    return { bytes: out, note: `${flips} bit flips` };
  }],
  [2, (rng, bytes) => {
    const out = Buffer.from(bytes);
    const at = rng.int(0, out.length - 1);
    out[at] = rng.pick([0x00, 0xff, 0x7f, 0x80, 0x01, rng.int(0, 255)]);
    return { bytes: out, note: `byte at ${at} = 0x${out[at].toString(16)}` };
  }],
  [2, (rng, bytes) => {
    const at = rng.int(0, bytes.length - 1);
    return { bytes: bytes.subarray(0, at), note: `truncated to ${at} bytes` };
  }],
  [2, (rng, bytes) => {
    const from = rng.int(0, bytes.length - 1);
    const to = Math.min(bytes.length, from + rng.size(1, 1024));
    const times = rng.size(1, 64);
    const at = rng.int(0, bytes.length);
    return { bytes: Buffer.concat([bytes.subarray(0, at), ...Array(times).fill(bytes.subarray(from, to)), bytes.subarray(at)]), note: `bytes ${from}..${to} inserted ${times}x at ${at}` };
  }],
  [1, (rng, bytes) => {
    const from = rng.int(0, bytes.length - 1);
    const to = Math.min(bytes.length, from + rng.size(1, 512));
    return { bytes: Buffer.concat([bytes.subarray(0, from), bytes.subarray(to)]), note: `bytes ${from}..${to} removed` };
  }],
  [2, (rng, bytes, other) => {
    const cut = rng.int(0, bytes.length);
    const from = rng.int(0, other.length);
    return { bytes: Buffer.concat([bytes.subarray(0, cut), other.subarray(from)]), note: `first ${cut} bytes, then another stream from byte ${from}` };
  }],
  [1, (rng, bytes, other) => ({ bytes: Buffer.concat(rng.chance(0.5) ? [bytes, bytes] : [bytes, other]), note: 'two streams back to back' })],
];

/** One to four byte-level mutations of a valid stream, and what they were. */
export function mutateArrow(rng: Rng, bytes: Buffer, other: Buffer): { bytes: Buffer; note: string } {
  let current = bytes;
  const notes: string[] = [];
  for (let i = rng.size(1, 4); i > 0; i--) {
    if (current.length === 0) break;
    const m = rng.weighted(MUTATIONS)(rng, current, other);
    current = m.bytes;
    notes.push(m.note);
  }
  return { bytes: current, note: notes.join('; ') };
}
