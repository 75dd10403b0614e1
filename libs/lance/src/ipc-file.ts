import * as arrow from 'apache-arrow';
// apache-arrow writes a file footer only from rows it encodes itself; its Footer class (pinned with
// apache-arrow 18.1.0 in package.json, proven by libs/lance/test/ipc-file.spec.ts) encodes one for
// messages that are already encoded.
import { FileBlock, Footer } from 'apache-arrow/ipc/metadata/file';
import { invalidInput } from '@app/catalog';
import { ARROW_FILE_MAGIC as MAGIC } from './arrow-ipc';
import { BufferPool } from './buffer-pool';

const CONTINUATION = -1;

/**
 * Files of up to 16 MiB, 64 MiB in all, sized in whole MiB, are kept for the next body: a fresh
 * buffer costs its page faults again.
 */
const files = new BufferPool(16 * 1024 * 1024, 64 * 1024 * 1024, 1024 * 1024);

/**
 * Runs `use` with the Arrow IPC file of a body that arrived as an IPC stream, for Lance's native
 * `add`, which reads files only. A file is the stream's messages between a magic prefix and a
 * footer indexing them, so the messages are copied once as they are instead of the rows being
 * encoded again (what `tableToIPC(table, 'file')` does). A body that is a file already is used as
 * it is; one with dictionaries is encoded again, as a stream may replace a dictionary and a file
 * may not. The file's buffer is reused once `use` is done with it (filling a fresh 2.6 MB buffer
 * took about 0.5 ms, most of it page faults; a reused one 0.06 ms).
 */
export async function withIpcFile<T>(body: { bytes: Buffer; table: arrow.Table }, use: (file: Buffer) => Promise<T>): Promise<T> {
  const { bytes } = body;
  if (bytes.length >= 6 && bytes.subarray(0, 6).equals(MAGIC)) return use(bytes);
  const messages = streamMessages(bytes);
  if (messages.dictionaries > 0 || !messages.schema) return use(Buffer.from(arrow.tableToIPC(body.table, 'file')));
  const footer = Footer.encode(new Footer(messages.schema, arrow.MetadataVersion.V5, messages.batches, []));
  const size = 8 + messages.end + footer.length + 4 + MAGIC.length;
  const buffer = files.take(size);
  try {
    return await use(fill(buffer.subarray(0, size), bytes, messages.end, footer));
  } finally {
    files.give(buffer);
  }
}

function fill(file: Buffer, bytes: Buffer, end: number, footer: Uint8Array): Buffer {
  // Magic and 2 bytes of padding first, so every message keeps its 8-byte alignment.
  MAGIC.copy(file, 0);
  file.writeUInt16LE(0, 6);
  file.set(bytes.subarray(0, end), 8);
  file.set(footer, 8 + end);
  file.writeInt32LE(footer.length, 8 + end + footer.length);
  MAGIC.copy(file, 8 + end + footer.length + 4);
  return file;
}

/** Where the record batches of a stream sit (as file blocks, offsets already past the 8-byte prefix). */
function streamMessages(bytes: Buffer) {
  const batches: FileBlock[] = [];
  let schema: arrow.Schema | undefined;
  let dictionaries = 0;
  let at = 0;
  while (at + 4 <= bytes.length) {
    const start = at;
    let length = bytes.readInt32LE(at);
    at += 4;
    // Current framing is a continuation marker, then the length; before Arrow 0.15 the length alone.
    if (length === CONTINUATION) {
      if (at + 4 > bytes.length) break;
      length = bytes.readInt32LE(at);
      at += 4;
    }
    if (length === 0) return { schema, batches, dictionaries, end: start };
    if (length < 0 || at + length > bytes.length) throw invalidInput('the request body is not a readable Arrow IPC stream: a message runs past its end');
    const message = arrow.Message.decode(bytes.subarray(at, at + length));
    at += length;
    const metaDataLength = at - start;
    const bodyLength = Number(message.bodyLength);
    if (at + bodyLength > bytes.length) throw invalidInput('the request body is not a readable Arrow IPC stream: a message body runs past its end');
    if (message.isSchema()) schema ??= message.header()!;
    else if (message.isRecordBatch()) batches.push(new FileBlock(metaDataLength, bodyLength, start + 8));
    else if (message.isDictionaryBatch()) dictionaries++;
    at += bodyLength;
  }
  return { schema, batches, dictionaries, end: at };
}
