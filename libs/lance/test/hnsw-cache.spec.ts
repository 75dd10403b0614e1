import { HierarchicalNSW } from 'hnswlib-node';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFiles } from '@app/storage';
import { hnswFiles } from '@app/catalog';
import { HnswCache } from '../src/hnsw-index';

/** A real graph of `rows` 4-d points written where a build would put it, for table `location`. */
function graphAt(rows: number): string {
  const location = join(mkdtempSync(join(tmpdir(), 'hnsw-cache-')), 't.lance');
  mkdirSync(join(location, '_hnsw'), { recursive: true });
  const files = hnswFiles(location, 'g');
  const graph = new HierarchicalNSW('l2', 4);
  graph.initIndex(rows, 8, 40);
  for (let i = 0; i < rows; i++) graph.addPoint([i, i, i, i], i);
  graph.writeIndexSync(files.graph);
  const ids = BigUint64Array.from({ length: rows }, (_, i) => BigInt(rows - i));
  writeFileSync(files.rowIds, new Uint8Array(ids.buffer));
  writeFileSync(files.meta, JSON.stringify({ column: 'v', space: 'l2', dim: 4, m: 8, efConstruction: 40, tableVersion: 1, rows }));
  return location;
}

describe('the HNSW graph cache', () => {
  it('loads a graph with its row ids, and keeps it while it is used', async () => {
    const cache = new HnswCache(2, new LocalFiles());
    const location = graphAt(5);
    const loaded = (await cache.load(location, 'g'))!;
    expect(loaded.meta).toMatchObject({ dim: 4, rows: 5 });
    expect(Array.from(loaded.labels)).toEqual([5n, 4n, 3n, 2n, 1n]);
    expect(Array.from(loaded.indexed)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(await cache.load(location, 'g')).toBe(loaded);
    expect(await cache.load(join(location, 'missing'), 'g')).toBeUndefined();
  });

  it('holds at most its capacity, dropping the least recently used graph first and loading it again when asked', async () => {
    const cache = new HnswCache(2, new LocalFiles());
    const [a, b, c] = [graphAt(3), graphAt(4), graphAt(6)];
    const first = { a: await cache.load(a, 'g'), b: await cache.load(b, 'g') };
    expect(await cache.load(a, 'g')).toBe(first.a);
    await cache.load(c, 'g');
    // b was the least recently used: it went; a stayed.
    expect(await cache.load(a, 'g')).toBe(first.a);
    const bAgain = await cache.load(b, 'g');
    expect(bAgain).not.toBe(first.b);
    expect(bAgain!.meta.rows).toBe(4);
  });
});
