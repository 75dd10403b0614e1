import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryIpcFile } from '../src/query-ipc';

const DIM = 8;

function rows(n: number): arrow.Table {
  const type = new arrow.FixedSizeList(DIM, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: n * DIM }, (_, i) => ((i * 7919) % 1000) / 1000);
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: n }, (_, i) => i)),
    vector: arrow.makeVector(arrow.makeData({ type, length: n, child: arrow.makeData({ type: new arrow.Float32(), length: n * DIM, data: values }) })),
  });
}

const MAGIC = 'ARROW1';
const isFile = (b: Uint8Array) => Buffer.from(b.subarray(0, 6)).toString() === MAGIC && Buffer.from(b.subarray(b.length - 6)).toString() === MAGIC;

/**
 * queryIpcFile reads lancedb's native batches behind the public toArrow(). These pin what it relies
 * on against the real lancedb (0.39.0, checked by ipc-add.spec.ts): each answer is an Arrow IPC file
 * holding exactly the rows toArrow() gives, whether Lance produced one batch, several, or none.
 */
describe('query answers as Arrow IPC files from lancedb’s native batches', () => {
  const dir = mkdtempSync(join(tmpdir(), 'query-ipc-'));
  let table: lancedb.Table;
  beforeAll(async () => {
    const db = await lancedb.connect(dir);
    table = await db.createTable('t', rows(20_000));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const query = () => Array.from({ length: DIM }, () => 0.5);

  it('passes a one-batch answer on as the file the native side wrote', async () => {
    const file = await queryIpcFile(table.search(query()).limit(10) as lancedb.VectorQuery);
    expect(isFile(file)).toBe(true);
    const got = arrow.tableFromIPC(file);
    const expected = (await table.search(query()).limit(10).toArrow()) as unknown as arrow.Table;
    expect(got.schema.fields.map((f) => f.name)).toEqual(['id', 'vector', '_distance']);
    expect(got.getChild('id')!.toArray()).toEqual(expected.getChild('id')!.toArray());
    expect(got.getChild('_distance')!.toArray()).toEqual(expected.getChild('_distance')!.toArray());
  });

  it('joins an answer of several batches into one file with every row', async () => {
    const file = await queryIpcFile(table.query().select(['id']).limit(15_000));
    expect(isFile(file)).toBe(true);
    const got = arrow.tableFromIPC(file);
    expect(got.batches.length).toBeGreaterThan(1);
    expect(got.numRows).toBe(15_000);
    expect(got.getChild('id')!.toArray()).toEqual(Int32Array.from({ length: 15_000 }, (_, i) => i));
  });

  it('answers a readable file when no row matches', async () => {
    const file = await queryIpcFile(table.query().where('id < 0').limit(10));
    expect(isFile(file)).toBe(true);
    expect(arrow.tableFromIPC(file).numRows).toBe(0);
  });
});
