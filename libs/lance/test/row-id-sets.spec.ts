import * as arrow from 'apache-arrow';
import { hasRowId, packedRowIds, rowIdsNotIn, sortedRowIds } from '../src/row-id-sets';

const ids = (...values: Array<number | bigint>) => BigUint64Array.from(values, BigInt);
/** Row ids the way Lance makes them: fragment id in the high 32 bits, offset in the low ones. */
const rowId = (fragment: number, offset: number) => (BigInt(fragment) << 32n) | BigInt(offset);

describe('row id sets', () => {
  it('packs a UInt64 column of several record batches in row order', () => {
    const batch = (from: number, n: number) => arrow.makeData({ type: new arrow.Uint64(), length: n, data: BigUint64Array.from({ length: n }, (_, i) => rowId(from, i)) });
    const column = new arrow.Vector([batch(0, 3), batch(7, 2)]);
    expect(Array.from(packedRowIds(column))).toEqual([rowId(0, 0), rowId(0, 1), rowId(0, 2), rowId(7, 0), rowId(7, 1)]);
  });

  it('sorts only when it has to, numerically', () => {
    const already = ids(1, 2, rowId(3, 0));
    expect(sortedRowIds(already)).toBe(already);
    expect(Array.from(sortedRowIds(ids(rowId(2, 0), 5, rowId(1, 9))))).toEqual([5n, rowId(1, 9), rowId(2, 0)]);
  });

  it('finds members by binary search, at the ends too and above 2^53', () => {
    const set = ids(0, 3, 9, rowId(4, 1), rowId(70000, 5));
    for (const id of set) expect(hasRowId(set, id)).toBe(true);
    for (const id of [1n, 10n, rowId(4, 0), rowId(70000, 6), 2n ** 63n]) expect(hasRowId(set, id)).toBe(false);
    expect(hasRowId(new BigUint64Array(0), 0n)).toBe(false);
  });

  it('takes the difference of two sorted sets in one pass', () => {
    const live = ids(1, 2, 4, 6, 8, rowId(9, 0));
    expect(Array.from(rowIdsNotIn(live, ids(2, 3, 6, rowId(9, 0), rowId(9, 1))))).toEqual([1n, 4n, 8n]);
    expect(Array.from(rowIdsNotIn(live, new BigUint64Array(0)))).toEqual(Array.from(live));
    expect(rowIdsNotIn(live, live).length).toBe(0);
  });
});
