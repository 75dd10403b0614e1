import * as arrow from 'apache-arrow';
import { invalidInput } from '@app/catalog';
import { ArrowLimits, checkArrowIpc } from './arrow-ipc-limits';
import { checkArrowConsistency } from './arrow-consistency';

/** What an Arrow IPC file starts and ends with (a stream has no such mark). */
export const ARROW_FILE_MAGIC = Buffer.from('ARROW1', 'latin1');

/**
 * An Arrow IPC body as it arrived (a stream, or a file), checked for structure but not decoded:
 * decoding runs where a slow or huge body costs only its own request (the data-plane process that
 * writes it, `decodeArrowBody`). `rows` is what its record batches declare.
 */
export interface ArrowBody {
  bytes: Buffer;
  rows: number;
}

/**
 * Takes an Arrow IPC body once its structure is known to fit its bytes and `limits`
 * (`checkArrowIpc`: one pass over its messages, none over its data), without decoding it.
 */
export function readArrowBody(body: unknown, limits: ArrowLimits): ArrowBody {
  if (!(body instanceof Uint8Array) || body.length === 0) {
    throw invalidInput('the request body must be an Arrow IPC stream (content-type application/vnd.apache.arrow.stream)');
  }
  const summary = checkArrowIpc(body, limits);
  if (!summary.schema) throw invalidInput('the request body is not an Arrow IPC stream: it holds no schema');
  return { rows: summary.rows, bytes: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
}

/**
 * Decodes a body `readArrowBody` took, refusing what apache-arrow reads without complaint: bytes
 * that are not Arrow (an empty, field-less table) and columns whose numbers contradict each other.
 */
export function decodeArrowBody(bytes: Uint8Array): arrow.Table {
  let table: arrow.Table;
  try {
    table = arrow.tableFromIPC(bytes);
  } catch (e) {
    throw invalidInput(`the request body is not a readable Arrow IPC stream: ${(e as Error).message}`);
  }
  if (table.schema.fields.length === 0) throw invalidInput('the request body is not an Arrow IPC stream: it holds no schema');
  checkArrowConsistency(table);
  return table;
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
