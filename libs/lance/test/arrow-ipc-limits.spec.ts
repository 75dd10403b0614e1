import * as arrow from 'apache-arrow';
import { CatalogError } from '@app/catalog';
import { DEFAULT_INPUT_LIMITS } from '@app/config';
import { ArrowLimits, checkArrowIpc } from '../src/arrow-ipc-limits';
import { readArrowBody } from '../src/arrow-ipc';
import { streamClaimingFields, streamClaimingRows, streamWithBufferAt } from '../../../test/support/arrow-corrupt';

const LIMITS = DEFAULT_INPUT_LIMITS.arrow;

function refusal(bytes: Uint8Array, limits: ArrowLimits = LIMITS): string {
  try {
    checkArrowIpc(bytes, limits);
  } catch (e) {
    expect(e).toBeInstanceOf(CatalogError);
    expect((e as CatalogError).code).toBe(13);
    return (e as Error).message;
  }
  throw new Error('the body was accepted');
}

const DICTIONARY = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0);

/** Every type apache-arrow writes, nested and dictionary-encoded, with nulls. */
function everyType(rows: number): arrow.Table {
  const n = (i: number) => (i % 7 === 3 ? null : i);
  const vectorType = new arrow.FixedSizeList(4, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: rows * 4 }, (_, i) => i / 3);
  return new arrow.Table({
    i8: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => n(i % 100)), new arrow.Int8()),
    i64: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => BigInt(i)), new arrow.Int64()),
    u32: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => n(i)), new arrow.Uint32()),
    f16: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => i / 2), new arrow.Float16()),
    f64: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => n(i)), new arrow.Float64()),
    bool: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => (i % 5 === 0 ? null : i % 2 === 0)), new arrow.Bool()),
    utf8: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => (i % 6 === 0 ? null : `row ${i}`)), new arrow.Utf8()),
    large: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => `large ${i}`), new arrow.LargeUtf8()),
    dict: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => ['a', 'b', null][i % 3]), DICTIONARY),
    bin: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => Uint8Array.of(i % 256, 1, 2)), new arrow.Binary()),
    fsb: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => Uint8Array.of(i % 256, 0, 0, 0)), new arrow.FixedSizeBinary(4)),
    day: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => new Date(86_400_000 * i)), new arrow.DateDay()),
    ms: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => new Date(1000 * i)), new arrow.DateMillisecond()),
    ts: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => 1000 * i), new arrow.TimestampMicrosecond()),
    time: arrow.vectorFromArray(Array.from({ length: rows }, (_, i) => i), new arrow.TimeMillisecond()),
    list: arrow.vectorFromArray(
      Array.from({ length: rows }, (_, i) => (i % 4 === 0 ? null : [i, i + 1])),
      new arrow.List(new arrow.Field('item', new arrow.Int32(), true)),
    ),
    struct: arrow.vectorFromArray(
      Array.from({ length: rows }, (_, i) => (i % 9 === 0 ? null : { a: i, b: `s${i}` })),
      new arrow.Struct([new arrow.Field('a', new arrow.Int32(), true), new arrow.Field('b', new arrow.Utf8(), true)]),
    ),
    vector: arrow.makeVector(arrow.makeData({ type: vectorType, length: rows, child: arrow.makeData({ type: new arrow.Float32(), length: rows * 4, data: values }) })),
    nothing: arrow.makeVector(arrow.makeData({ type: new arrow.Null(), length: rows })),
  });
}

describe('checkArrowIpc', () => {
  it('passes what apache-arrow writes: every type, several batches, streams and files, empty tables', () => {
    const table = new arrow.Table([...everyType(1000).batches, ...everyType(14).batches, ...everyType(14).batches]);
    expect(table.batches.length).toBe(3);
    for (const bytes of [arrow.tableToIPC(table, 'stream'), arrow.tableToIPC(everyType(1000), 'file'), arrow.tableToIPC(new arrow.Table(table.schema), 'stream')]) {
      expect(() => checkArrowIpc(bytes, LIMITS)).not.toThrow();
    }
    const body = readArrowBody(Buffer.from(arrow.tableToIPC(table, 'stream')), LIMITS);
    expect(body.rows).toBe(1028);
    expect(checkArrowIpc(arrow.tableToIPC(everyType(1000), 'file'), LIMITS)).toMatchObject({ schema: true, rows: 1000 });
  });

  it('counts dictionary batches, deltas and replacements included, and refuses more than ARROW_MAX_DICTIONARY_BATCHES', () => {
    // Three batches whose dictionaries differ: the stream sends each dictionary again (or its delta) before each batch.
    const table = new arrow.Table([...everyType(20).batches, ...everyType(30).batches, ...everyType(40).batches]);
    const stream = arrow.tableToIPC(table, 'stream');
    const { dictionaryBatches, rows } = checkArrowIpc(stream, LIMITS);
    expect(rows).toBe(90);
    expect(dictionaryBatches).toBeGreaterThanOrEqual(3);
    expect(refusal(stream, { ...LIMITS, maxDictionaryBatches: dictionaryBatches - 1 })).toMatch(
      new RegExp(`more than ${dictionaryBatches - 1} dictionary batches \\(ARROW_MAX_DICTIONARY_BATCHES\\)`),
    );
    expect(() => checkArrowIpc(stream, { ...LIMITS, maxDictionaryBatches: dictionaryBatches })).not.toThrow();
  });

  it('refuses a schema claiming 2^31-1 fields in 288 bytes before apache-arrow reads it', () => {
    const bytes = streamClaimingFields();
    expect(bytes.length).toBeLessThan(400);
    expect(refusal(bytes)).toMatch(/claims 2147483647 fields, more than its \d+ bytes of metadata can hold/);
    expect(() => readArrowBody(bytes, LIMITS)).toThrow(CatalogError);
  });

  it('holds schemas to ARROW_MAX_FIELDS and ARROW_MAX_DEPTH', () => {
    const wide = new arrow.Table(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`c${i}`, arrow.vectorFromArray(Int32Array.of(i))])));
    expect(refusal(arrow.tableToIPC(wide, 'stream'), { ...LIMITS, maxFields: 29 })).toMatch(/more than 29 fields \(ARROW_MAX_FIELDS\)/);
    expect(() => checkArrowIpc(arrow.tableToIPC(wide, 'stream'), { ...LIMITS, maxFields: 30 })).not.toThrow();

    let type: arrow.DataType = new arrow.Int32();
    for (let i = 0; i < 5; i++) type = new arrow.List(new arrow.Field('item', type, true));
    const deep = new arrow.Table({ deep: arrow.vectorFromArray([], type) });
    expect(refusal(arrow.tableToIPC(deep, 'stream'), { ...LIMITS, maxDepth: 5 })).toMatch(/deeper than 5 \(ARROW_MAX_DEPTH\)/);
    expect(() => checkArrowIpc(arrow.tableToIPC(deep, 'stream'), { ...LIMITS, maxDepth: 6 })).not.toThrow();
  });

  it('holds the batches of one body to ARROW_MAX_NODES', () => {
    const one = new arrow.Table({ a: arrow.vectorFromArray(Int32Array.of(1)), b: arrow.vectorFromArray(Int32Array.of(2)) });
    const many = new arrow.Table(Array.from({ length: 10 }, () => one.batches[0]));
    expect(refusal(arrow.tableToIPC(many, 'stream'), { ...LIMITS, maxNodes: 19 })).toMatch(/more than 19 field nodes in all \(ARROW_MAX_NODES\)/);
    expect(() => checkArrowIpc(arrow.tableToIPC(many, 'stream'), { ...LIMITS, maxNodes: 20 })).not.toThrow();
  });

  it('refuses batches that claim more than their bodies hold', () => {
    const stream = Buffer.from(arrow.tableToIPC(new arrow.Table({ x: arrow.vectorFromArray(Float32Array.from([1, 2])) }), 'stream'));
    expect(refusal(streamClaimingRows(stream, 1_000_000_000n))).toMatch(/claims 1000000000 rows/);
    expect(refusal(streamClaimingRows(stream, 1000n))).toMatch(/claims 1000 rows, more than its 8-byte buffer holds/);
    expect(refusal(streamClaimingRows(stream, -1n))).toMatch(/out of range/);
    expect(refusal(streamWithBufferAt(stream, 1_000_000n))).toMatch(/lies outside its \d+-byte body/);
  });

  it('refuses cut bodies and footers that point outside their file', () => {
    const stream = Buffer.from(arrow.tableToIPC(everyType(10), 'stream'));
    expect(refusal(stream.subarray(0, 200))).toMatch(/runs past the end of the body|remain/);
    const file = Buffer.from(arrow.tableToIPC(everyType(10), 'file'));
    const broken = Buffer.from(file);
    broken.writeInt32LE(file.length, file.length - 10);
    expect(refusal(broken)).toMatch(/footer of \d+ bytes does not fit/);
  });
});
