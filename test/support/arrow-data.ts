import * as arrow from 'apache-arrow';

/** A table with an id, a text column, a list-of-labels column and a float vector column. */
export function sampleTable(from: number, count: number, dim = 8): arrow.Table {
  const vectorType = new arrow.FixedSizeList(dim, new arrow.Field('item', new arrow.Float32(), true));
  const values = Float32Array.from({ length: count * dim }, (_, i) => Math.sin((from + Math.floor(i / dim)) * (1 + (i % dim))));
  const vectors = arrow.makeVector(
    arrow.makeData({ type: vectorType, length: count, child: arrow.makeData({ type: new arrow.Float32(), length: count * dim, data: values }) }),
  );
  const words = ['apple', 'banana', 'cherry', 'damson', 'elder'];
  const labels = arrow.vectorFromArray(
    Array.from({ length: count }, (_, i) => [words[(from + i) % 5], words[(from + i + 1) % 5]]),
    new arrow.List(new arrow.Field('item', new arrow.Utf8(), true)),
  );
  return new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from({ length: count }, (_, i) => from + i)),
    text: arrow.vectorFromArray(Array.from({ length: count }, (_, i) => `${words[(from + i) % 5]} pie number ${from + i}`), new arrow.Utf8()),
    category: arrow.vectorFromArray(Array.from({ length: count }, (_, i) => words[(from + i) % 3]), new arrow.Utf8()),
    labels,
    vector: vectors,
  });
}

export const arrowStream = (t: arrow.Table) => Buffer.from(arrow.tableToIPC(t, 'stream'));

export const ARROW_STREAM = { 'content-type': 'application/vnd.apache.arrow.stream' };

export async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
