import * as arrow from 'apache-arrow';
import { invalidInput } from '@app/catalog';
import { ArrowLimits, checkArrowIpc } from './arrow-ipc-limits';
import { checkArrowConsistency } from './arrow-consistency';

/** What an Arrow IPC file starts and ends with (a stream has no such mark). */
export const ARROW_FILE_MAGIC = Buffer.from('ARROW1', 'latin1');

/** An Arrow IPC body as read (the rows) and as it arrived (the bytes, which Lance can take as they are). */
export interface ArrowBody {
  table: arrow.Table;
  bytes: Buffer;
}

/**
 * Reads an Arrow IPC stream body, once its structure is known to fit its bytes and `limits`
 * (`checkArrowIpc`). `tableFromIPC` returns an empty, field-less table for bytes that are not
 * Arrow at all, so that case is refused explicitly.
 */
export function readArrowBody(body: unknown, limits: ArrowLimits): ArrowBody {
  if (!(body instanceof Uint8Array) || body.length === 0) {
    throw invalidInput('the request body must be an Arrow IPC stream (content-type application/vnd.apache.arrow.stream)');
  }
  checkArrowIpc(body, limits);
  let table: arrow.Table;
  try {
    table = arrow.tableFromIPC(body);
  } catch (e) {
    throw invalidInput(`the request body is not a readable Arrow IPC stream: ${(e as Error).message}`);
  }
  if (table.schema.fields.length === 0) throw invalidInput('the request body is not an Arrow IPC stream: it holds no schema');
  checkArrowConsistency(table);
  return { table, bytes: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
}

export function readArrowStream(body: unknown, limits: ArrowLimits): arrow.Table {
  return readArrowBody(body, limits).table;
}

/** The schema of a base64 Arrow IPC stream (CreateMaterializedView's output_schema), checked the same way. */
export function readArrowSchema(base64: string, limits: ArrowLimits, what: string): arrow.Schema {
  const bytes = Buffer.from(base64, 'base64');
  checkArrowIpc(bytes, limits, what);
  try {
    return arrow.tableFromIPC(bytes).schema;
  } catch {
    throw invalidInput(`${what} must be a base64-encoded Arrow IPC schema`);
  }
}

/** QueryTable answers an Arrow IPC file. */
export function toArrowFile(table: arrow.Table): Uint8Array {
  return arrow.tableToIPC(table, 'file');
}
