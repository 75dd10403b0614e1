import * as arrow from 'apache-arrow';
import { invalidInput } from '@app/catalog';

/**
 * Reads an Arrow IPC stream body. `tableFromIPC` returns an empty, field-less table for bytes that
 * are not Arrow at all, so that case is refused explicitly.
 */
export function readArrowStream(body: unknown): arrow.Table {
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
  return table;
}

/** QueryTable answers an Arrow IPC file. */
export function toArrowFile(table: arrow.Table): Uint8Array {
  return arrow.tableToIPC(table, 'file');
}
