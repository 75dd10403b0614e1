import * as arrow from 'apache-arrow';
import { CatalogError, ErrorCode } from '@app/catalog';
import { checkArrowConsistency } from '../src/arrow-consistency';

function refusal(table: arrow.Table): CatalogError {
  try {
    checkArrowConsistency(table);
  } catch (e) {
    if (e instanceof CatalogError) return e;
    throw e;
  }
  throw new Error('the table was accepted');
}

const tags = new arrow.Field('tags', new arrow.List(new arrow.Field('item', new arrow.Utf8(), true)), true);
const point = new arrow.Field('point', new arrow.Struct([new arrow.Field('x', new arrow.Float64()), new arrow.Field('y', new arrow.Float64())]), true);

function tableOf(field: arrow.Field, data: arrow.Data): arrow.Table {
  const schema = new arrow.Schema([field]);
  const batchData = arrow.makeData({ type: new arrow.Struct(schema.fields), length: data.length, nullCount: 0, children: [data] });
  return new arrow.Table(schema, [new arrow.RecordBatch(schema, batchData)]);
}

describe('checkArrowConsistency', () => {
  it('accepts a well-formed table with nested columns', () => {
    const table = arrow.tableFromArrays({ id: Int32Array.from([1, 2]) });
    expect(() => checkArrowConsistency(table)).not.toThrow();
    const list = arrow.vectorFromArray([['a'], ['b', 'c']], tags.type);
    expect(() => checkArrowConsistency(tableOf(tags, list.data[0]))).not.toThrow();
  });

  it('refuses a list column whose values the body never carries, naming it', () => {
    const list = arrow.vectorFromArray([['a'], ['b', 'c']], tags.type).data[0];
    const hollow = list.clone(list.type, list.offset, list.length, list.nullCount, list.buffers, []);
    const e = refusal(tableOf(tags, hollow));
    expect(e.code).toBe(ErrorCode.InvalidInput);
    expect(e.message).toContain("column 'tags'");
  });

  it('refuses a struct column with fewer children than its type, and a column with no data at all', () => {
    const x = arrow.vectorFromArray([1, 2], new arrow.Float64()).data[0];
    const half = arrow.makeData({ type: point.type, length: 2, nullCount: 0, children: [x] });
    expect(refusal(tableOf(point, half)).message).toContain("column 'point'");

    // As the decoder leaves a body that declares two columns and carries one.
    const table = arrow.tableFromArrays({ id: Int32Array.from([1, 2]), name: ['a', 'b'] });
    (table.batches[0].data.children as arrow.Data[]).length = 1;
    const e = refusal(table);
    expect(e.code).toBe(ErrorCode.InvalidInput);
    expect(e.message).toContain("column 'name'");
  });

  it('refuses offsets past their values', () => {
    const names = arrow.vectorFromArray(['ab', 'cd'], new arrow.Utf8()).data[0];
    const field = new arrow.Field('name', new arrow.Utf8());
    const bad = names.clone(names.type, 0, 2, 0, { [arrow.BufferType.OFFSET]: Int32Array.from([0, 2, 400]), [arrow.BufferType.DATA]: names.values, [arrow.BufferType.VALIDITY]: names.nullBitmap, [arrow.BufferType.TYPE]: names.typeIds });
    expect(refusal(tableOf(field, bad)).message).toContain('past its');
  });
});
