import type * as lancedb from '@lancedb/lancedb';

/** The native table behind lancedb 0.39.0's `LocalTable.inner`; its `add` reads an Arrow IPC file. */
interface NativeTable {
  add(file: Buffer, mode: string, progress?: undefined): Promise<lancedb.AddResult>;
}

/**
 * Appends the rows of an Arrow IPC file to a table, or replaces its rows with them. lancedb's public
 * `add` reads the table's schema (a native call, for embedding functions the server never runs) and
 * encodes the rows into an IPC file before calling the native `add` with it; the server already
 * holds such a file (`ipcFileOf`), so it is handed over directly. Pinned to lancedb 0.39.0
 * (package.json); libs/lance/test/ipc-add.spec.ts fails if that version or this behaviour changes.
 */
export function addIpcFile(table: lancedb.Table, file: Buffer, mode: 'append' | 'overwrite'): Promise<lancedb.AddResult> {
  const native = (table as unknown as { inner?: NativeTable }).inner;
  if (typeof native?.add !== 'function') throw new Error('this lancedb version keeps no native table behind Table.inner; see libs/lance/src/ipc-add.ts');
  return native.add(file, mode, undefined);
}
