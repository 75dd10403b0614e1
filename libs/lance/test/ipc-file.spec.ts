import * as arrow from 'apache-arrow';
import { CatalogError } from '@app/catalog';
import { DEFAULT_INPUT_LIMITS } from '@app/config';
import { decodeArrowBody, readArrowBody } from '../src/arrow-ipc';
import { withIpcFile } from '../src/ipc-file';

const LIMITS = DEFAULT_INPUT_LIMITS.arrow;

const fileOf = (table: arrow.Table, bytes = Buffer.from(arrow.tableToIPC(table, 'stream'))) =>
  withIpcFile({ bytes: readArrowBody(bytes, LIMITS).bytes, table: decodeArrowBody(bytes) }, async (file) => Buffer.from(file));

const rowsOf = (t: arrow.Table) => JSON.stringify(t.toArray().map((r) => r.toJSON()), (_k, v) => (typeof v === 'bigint' ? String(v) : v));

function mixed(from: number, n: number): arrow.Table {
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: n }, (_, i) => from + i)),
    big: arrow.vectorFromArray(BigInt64Array.from({ length: n }, (_, i) => BigInt(from + i) * 3n)),
    // Plain Utf8: apache-arrow makes strings a dictionary unless told.
    name: arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : `row ${from + i}`)),
      new arrow.Utf8(),
    ),
    score: arrow.vectorFromArray(Float64Array.from({ length: n }, (_, i) => (from + i) / 7)),
  });
}

describe('the Arrow IPC file of a stream body', () => {
  it('holds the stream’s own messages and the same schema and rows, in a file apache-arrow reads back', async () => {
    const table = mixed(0, 1000);
    const stream = Buffer.from(arrow.tableToIPC(table, 'stream'));
    const file = await fileOf(table, stream);
    // Copied, not encoded again: the messages (all but the 8-byte end-of-stream marker) follow the 8-byte prefix.
    expect(file.subarray(8, 8 + stream.length - 8).equals(stream.subarray(0, stream.length - 8))).toBe(true);
    expect(file.subarray(0, 6).toString('latin1')).toBe('ARROW1');
    expect(file.subarray(file.length - 6).toString('latin1')).toBe('ARROW1');
    const back = arrow.RecordBatchFileReader.from(file);
    back.open();
    expect(back.numRecordBatches).toBe(1);
    const read = new arrow.Table([...back]);
    expect(read.schema.fields.map((f) => `${f.name}:${f.type}:${f.nullable}`)).toEqual(table.schema.fields.map((f) => `${f.name}:${f.type}:${f.nullable}`));
    expect(rowsOf(read)).toBe(rowsOf(table));
  });

  it('indexes every record batch of a stream of several, and a stream of none', async () => {
    const table = new arrow.Table([...mixed(0, 10).batches, ...mixed(10, 5).batches, ...mixed(15, 1).batches]);
    const reader = arrow.RecordBatchFileReader.from(await fileOf(table));
    reader.open();
    expect(reader.numRecordBatches).toBe(3);
    expect(rowsOf(new arrow.Table([...reader]))).toBe(rowsOf(table));

    const empty = new arrow.Table(table.schema);
    const none = arrow.RecordBatchFileReader.from(await fileOf(empty));
    none.open();
    expect(none.numRecordBatches).toBe(0);
    expect(none.schema.fields.map((f) => f.name)).toEqual(['id', 'big', 'name', 'score']);
  });

  it('takes a stream without its end-of-stream marker, and passes a body that is a file already as it is', async () => {
    const table = mixed(0, 20);
    const stream = Buffer.from(arrow.tableToIPC(table, 'stream'));
    const cut = stream.subarray(0, stream.length - 8);
    expect(rowsOf(arrow.tableFromIPC(await fileOf(table, cut)))).toBe(rowsOf(table));

    const asFile = Buffer.from(arrow.tableToIPC(table, 'file'));
    expect((await fileOf(table, asFile)).equals(asFile)).toBe(true);
  });

  it('encodes a stream with dictionaries again, as a file cannot replace one', async () => {
    const dict = arrow.vectorFromArray(['a', 'b', 'a', 'c'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()));
    const table = new arrow.Table({ tag: dict });
    const back = arrow.tableFromIPC(await fileOf(table));
    expect(back.getChild('tag')!.toArray()).toEqual(['a', 'b', 'a', 'c']);
  });

  it('refuses a stream cut inside a message with code 13', async () => {
    const stream = Buffer.from(arrow.tableToIPC(mixed(0, 100), 'stream'));
    const body = { table: mixed(0, 100), bytes: stream.subarray(0, stream.length - 500) };
    const refusal = await withIpcFile(body, async () => 'used').catch((e) => e);
    expect(refusal).toBeInstanceOf(CatalogError);
    expect((refusal as CatalogError).code).toBe(13);
  });

  it('never lends a buffer that is still in use', async () => {
    const first = mixed(0, 5000);
    const second = mixed(100, 5000);
    const body = (t: arrow.Table) => ({ bytes: Buffer.from(arrow.tableToIPC(t, 'stream')), table: t });
    await withIpcFile(body(first), async (file) => {
      // A second body while the first file is in use gets other memory: scribbling on it leaves the first intact.
      await withIpcFile(body(second), async (other) => void other.fill(0));
      expect(rowsOf(arrow.tableFromIPC(file))).toBe(rowsOf(first));
    });
    // Given back, it serves the next body.
    const third = mixed(7, 3000);
    expect(rowsOf(arrow.tableFromIPC(await fileOf(third)))).toBe(rowsOf(third));
  });
});
