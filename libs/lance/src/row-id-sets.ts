import * as arrow from 'apache-arrow';

/**
 * Sets of Lance row ids as sorted BigUint64Arrays: membership by binary search, a difference by
 * one merge. A million ids take 8 MB and no strings, and are worked out in milliseconds, where a
 * Set of decimal strings took about a second of the event loop to build.
 */

/** A UInt64 column (`_rowid`) as one BigUint64Array. */
export function packedRowIds(column: arrow.Vector): BigUint64Array {
  const out = new BigUint64Array(column.length);
  let row = 0;
  for (const chunk of column.data) {
    out.set(arrow.makeVector(chunk).toArray() as BigUint64Array, row);
    row += chunk.length;
  }
  return out;
}

/** The ids in ascending order (a scan returns them so already; they are sorted when not). */
export function sortedRowIds(ids: BigUint64Array): BigUint64Array {
  for (let i = 1; i < ids.length; i++) if (ids[i - 1] > ids[i]) return ids.sort();
  return ids;
}

export function hasRowId(sorted: BigUint64Array, id: bigint): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = sorted[middle];
    if (value === id) return true;
    if (value < id) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/** The ids of `sorted` that `others` (also sorted) does not hold. */
export function rowIdsNotIn(sorted: BigUint64Array, others: BigUint64Array): BigUint64Array {
  const out = new BigUint64Array(sorted.length);
  let kept = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i];
    while (j < others.length && others[j] < id) j++;
    if (j === others.length || others[j] !== id) out[kept++] = id;
  }
  return out.slice(0, kept);
}
