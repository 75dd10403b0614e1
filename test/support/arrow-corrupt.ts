import * as arrow from 'apache-arrow';
import { ByteBuffer } from 'flatbuffers';
import { Message } from 'apache-arrow/fb/message';
import { RecordBatch } from 'apache-arrow/fb/record-batch';
import { Schema } from 'apache-arrow/fb/schema';

/** The messages of an Arrow IPC stream: where each one's metadata starts, and the message read from it. */
export function streamMessages(bytes: Buffer): Array<{ at: number; message: Message }> {
  const found: Array<{ at: number; message: Message }> = [];
  let at = 0;
  while (at + 8 <= bytes.length) {
    const length = bytes.readInt32LE(at + 4);
    if (length === 0) break;
    const bb = new ByteBuffer(new Uint8Array(bytes.buffer, bytes.byteOffset + at + 8, length));
    const message = Message.getRootAsMessage(bb);
    found.push({ at: at + 8, message });
    at += 8 + length + Number(message.bodyLength());
  }
  return found;
}

/** A one-column Float32 stream whose schema claims `count` fields: apache-arrow allocated a field for each. */
export function streamClaimingFields(count = 0x7fffffff): Buffer {
  const bytes = Buffer.from(arrow.tableToIPC(new arrow.Table({ x: arrow.vectorFromArray(Float32Array.from([1, 2])) }), 'stream'));
  const [{ at, message }] = streamMessages(bytes);
  const schema = message.header(new Schema()) as Schema;
  const bb = schema.bb!;
  const fieldsLength = bb.__vector(schema.bb_pos + bb.__offset(schema.bb_pos, 6)) - 4;
  bytes.writeInt32LE(count, at + fieldsLength);
  return bytes;
}

/** A copy of a stream whose first record batch claims `rows` rows, in the batch and in its first column. */
export function streamClaimingRows(bytes: Buffer, rows: bigint): Buffer {
  const copy = Buffer.from(bytes);
  const { at, message } = streamMessages(copy).find((m) => m.message.headerType() === 3)!;
  const batch = message.header(new RecordBatch()) as RecordBatch;
  const bb = batch.bb!;
  copy.writeBigInt64LE(rows, at + batch.bb_pos + bb.__offset(batch.bb_pos, 4));
  copy.writeBigInt64LE(rows, at + batch.nodes(0)!.bb_pos);
  return copy;
}

/** A copy of a stream whose first record batch's first buffer is moved to `offset`. */
export function streamWithBufferAt(bytes: Buffer, offset: bigint): Buffer {
  const copy = Buffer.from(bytes);
  const { at, message } = streamMessages(copy).find((m) => m.message.headerType() === 3)!;
  const batch = message.header(new RecordBatch()) as RecordBatch;
  copy.writeBigInt64LE(offset, at + batch.buffers(0)!.bb_pos);
  return copy;
}

/**
 * A one-row stream of a dictionary-encoded column whose dictionary arrives as one batch and then
 * `deltas` empty delta batches: apache-arrow concatenates the dictionary at each delta, so its
 * decoding time grows with the square of their number while the body stays small.
 */
export function streamWithDeltaDictionaries(deltas: number): Buffer {
  const first = arrow.vectorFromArray(['a'], new arrow.Utf8()).data[0];
  const empty = arrow.vectorFromArray([] as string[], new arrow.Utf8()).data[0];
  const dictionary = new arrow.Vector([first, ...Array.from({ length: deltas }, () => empty)]);
  const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), 0);
  const indices = arrow.makeData({ type, length: 1, nullCount: 0, data: Int32Array.from([0]), dictionary });
  const table = new arrow.Table({ tag: arrow.makeVector(indices), id: arrow.vectorFromArray(Int32Array.from([1])) });
  return Buffer.from(arrow.tableToIPC(table, 'stream'));
}
