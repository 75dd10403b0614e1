import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lanceInputError } from '../../application/src/lance-errors';
import { DEFAULT_INPUT_LIMITS } from '@app/config';
import { decodeArrowBody, readArrowBody } from '../src/arrow-ipc';
import { addIpcFile } from '../src/ipc-add';
import { withIpcFile } from '../src/ipc-file';

const LIMITS = DEFAULT_INPUT_LIMITS.arrow;

const rows = (from: number, n: number) =>
  new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: n }, (_, i) => from + i)),
    // Plain Utf8: apache-arrow makes strings a dictionary unless told.
    text: arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => `item ${from + i}`),
      new arrow.Utf8(),
    ),
  });
const decoded = (bytes: Buffer) => ({ bytes: readArrowBody(bytes, LIMITS).bytes, table: decodeArrowBody(bytes) });
const bodyOf = (t: arrow.Table) => decoded(Buffer.from(arrow.tableToIPC(t, 'stream')));
const ids = async (t: lancedb.Table) => ((await t.query().select(['id']).toArrow()) as unknown as arrow.Table).getChild('id')!.toArray();

/**
 * addIpcFile calls lancedb's native `add` behind the public one. These pin what it relies on, on the
 * real lancedb: if an upgrade changes any of it, this fails before the server does.
 */
describe('adding an Arrow IPC file through the native add (lancedb 0.39.0)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipc-add-'));
  let db: lancedb.Connection;
  beforeAll(async () => (db = await lancedb.connect(dir)));
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is written against the lancedb version installed', () => {
    const installed = JSON.parse(readFileSync(join(require.resolve('@lancedb/lancedb'), '../../package.json'), 'utf8')).version;
    expect(installed).toBe('0.39.0');
  });

  it('appends and overwrites like the public add, answering the version it committed', async () => {
    const viaFile = await db.createTable('via_file', rows(0, 5));
    const viaPublic = await db.createTable('via_public', rows(0, 5));
    const added = await withIpcFile(bodyOf(rows(5, 10)), (file) => addIpcFile(viaFile, file, 'append'));
    const publicAdded = await viaPublic.add(rows(5, 10));
    expect(added).toEqual(publicAdded);
    expect(added.version).toBe(await viaFile.version());
    expect(await ids(viaFile)).toEqual(await ids(viaPublic));
    expect(await viaFile.countRows()).toBe(15);

    const replaced = await withIpcFile(bodyOf(rows(100, 3)), (file) => addIpcFile(viaFile, file, 'overwrite'));
    expect(replaced.version).toBe(added.version + 1);
    expect(Array.from(await ids(viaFile))).toEqual([100, 101, 102]);
  });

  it('has read the file by the time it answers: the buffer may be reused', async () => {
    const table = await db.createTable('reuse', rows(0, 1));
    const file = await withIpcFile(bodyOf(rows(1, 4)), async (f) => {
      await addIpcFile(table, f, 'append');
      return f;
    });
    file.fill(0);
    expect(Array.from(await ids(table))).toEqual([0, 1, 2, 3, 4]);
  });

  it('refuses rows that do not fit with an error the server reads as a schema mismatch, and changes nothing', async () => {
    const table = await db.createTable('strict', rows(0, 2));
    const before = await table.version();
    const wrong = decoded(Buffer.from(arrow.tableToIPC(arrow.tableFromArrays({ other: Float64Array.from([1]) }), 'stream')));
    const error = await withIpcFile(wrong, (file) => addIpcFile(table, file, 'append')).catch((e) => e);
    expect(String(error?.message)).not.toBe('undefined');
    expect((lanceInputError(error, 'inserting failed', true) as { code: number }).code).toBe(20);
    expect(await table.version()).toBe(before);
    expect(await table.countRows()).toBe(2);
  });

  it('fails plainly on a closed table', async () => {
    const table = await db.createTable('closed', rows(0, 1));
    table.close();
    await expect(withIpcFile(bodyOf(rows(1, 1)), (file) => addIpcFile(table, file, 'append'))).rejects.toThrow(/closed/i);
  });
});
