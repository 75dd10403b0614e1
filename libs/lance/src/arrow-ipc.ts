import * as arrow from 'apache-arrow';
import { invalidInput } from '@app/catalog';

/** What an Arrow IPC file starts and ends with (a stream has no such mark). */
export const ARROW_FILE_MAGIC = Buffer.from('ARROW1', 'latin1');

/** An Arrow IPC body as read (the rows) and as it arrived (the bytes, which Lance can take as they are). */
export interface ArrowBody {
  table: arrow.Table;
  bytes: Buffer;
}

/**
 * Reads an Arrow IPC stream body. `tableFromIPC` returns an empty, field-less table for bytes that
 * are not Arrow at all, so that case is refused explicitly.
 */
export function readArrowBody(body: unknown): ArrowBody {
  if (!(body instanceof Uint8Array) || body.length === 0) {
    throw invalidInput('the request body must be an Arrow IPC stream (content-type application/vnd.apache.arrow.stream)');
  }
  let table: arrow.Table;
  try {
    table = arrow.tableFromIPC(body);
  } catch (e) {
    throw invalidInput(`the request body is not a readable Arrow IPC stream: ${(e as Error).message}`);
  }
  if (table.schema.fields.length === 0) throw invalidInput('the request body is not an Arrow IPC stream: it holds no schema');
  return { table, bytes: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
}

export function readArrowStream(body: unknown): arrow.Table {
  return readArrowBody(body).table;
}

/** QueryTable answers an Arrow IPC file. */
export function toArrowFile(table: arrow.Table): Uint8Array {
  return arrow.tableToIPC(table, 'file');
}
