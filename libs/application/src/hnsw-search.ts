import * as arrow from 'apache-arrow';
import type { Table as LanceTable } from '@lancedb/lancedb';
import { CatalogView, IndexState, TableLine, TableState, hnswDir, hnswFiles, indexStatusOf, lineLocation } from '@app/catalog';
import { HnswCache, LiveRows, TableQuery, searchHnsw } from '@app/lance';
import { TableFiles } from '@app/storage';

/** The most rows (k + offset) a query takes from an HNSW graph; a larger one is Lance's own search. */
export const HNSW_MAX_ANSWER = 1000;

/**
 * The server's own vector search over a standalone HNSW index: used for plain nearest-neighbour
 * queries (one vector, no filter, no full-text part) on a column that has a ready HNSW index.
 */
export class HnswSearch {
  private readonly cache: HnswCache;
  private readonly live: LiveRows;

  /** `graphs`: how many graphs (and tables' live row ids) stay loaded. */
  constructor(graphs: number, files: TableFiles) {
    this.cache = new HnswCache(graphs, files);
    this.live = new LiveRows(graphs);
  }

  indexFor(view: CatalogView, table: TableState, q: TableQuery): IndexState | undefined {
    if (q.bypass_vector_index || q.filter || q.full_text_query || q.vector?.multi_vector?.length || !q.vector?.single_vector?.length) return undefined;
    // A graph search and its take run on this process's event loop: a larger answer is Lance's, off it.
    if (q.k + (q.offset ?? 0) > HNSW_MAX_ANSWER) return undefined;
    return [...table.indexes.values()].find(
      (i) => i.indexType === 'HNSW' && indexStatusOf(view, i) === 'ready' && (!q.vector_column || i.columns[0] === q.vector_column),
    );
  }

  async query(dataset: LanceTable, table: TableLine, index: IndexState, q: TableQuery): Promise<{ rows: arrow.Table; plan: string }> {
    const started = process.hrtime.bigint();
    const location = lineLocation(table);
    const loaded = await this.cache.load(location, index.name);
    if (!loaded) throw new Error(`the HNSW index '${index.name}' has no files at ${hnswDir(location)}`);
    const offset = q.offset ?? 0;
    const found = await searchHnsw(dataset, loaded, await this.live.of(dataset, location), q.vector!.single_vector!, q.k + offset, q.ef);
    const page = found.hits.slice(offset, offset + q.k);
    let take = dataset.takeRowIds(page.map((h) => h.rowId)).withRowId();
    if (q.columns?.column_names?.length) take = take.select(q.columns.column_names);
    else if (q.columns?.column_aliases) take = take.select(q.columns.column_aliases);
    const fetched = (await take.toArrow()) as unknown as arrow.Table;
    let rows = inPageOrder(fetched, page);
    if (!q.with_row_id) rows = rows.select(rows.schema.fields.map((f) => f.name).filter((n) => n !== '_rowid'));
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    const plan = [
      `HnswSearch: index=${index.name}, column=${loaded.meta.column}, space=${loaded.meta.space}, m=${loaded.meta.m}, ef=${Math.max(q.ef ?? 0, q.k + offset, 64)}`,
      `  graph: ${loaded.labels.length} rows as of version ${loaded.meta.tableVersion}, ${found.graphCandidates} candidates`,
      `  exact: ${found.exactRows} rows written since the build`,
      `  metrics=[output_rows=${rows.numRows}, elapsed=${elapsedMs.toFixed(3)}ms]`,
    ].join('\n');
    return { rows, plan };
  }

  explain(table: TableLine, index: IndexState, q: TableQuery): string {
    return [
      `HnswSearch: index=${index.name}, column=${index.columns[0]}, k=${q.k}, offset=${q.offset ?? 0}`,
      `  graph built by hnswlib-node at ${hnswFiles(lineLocation(table), index.name).graph}`,
      '  then an exact scan of the rows written since the build; results merged by distance',
    ].join('\n');
  }
}

/**
 * The fetched rows in the order of the hits, with each hit's `_distance`. A take Lance answered in
 * the order it was asked is used as it is; otherwise (Lance 0.37 answers in row-id order) each row
 * is put in its place as a batch of its own, built in one pass (concatenating them one by one, or
 * assigning a column across them, is quadratic in the rows: a k of 5,000 held the event loop over
 * a minute), and a row gone meanwhile (a write moved the shared handle on between search and take)
 * is left out.
 */
function inPageOrder<H extends { rowId: bigint; distance: number }>(fetched: arrow.Table, page: H[]): arrow.Table {
  const ids = fetched.getChild('_rowid')!;
  if (fetched.numRows === page.length && page.every((h, i) => ids.get(i) === h.rowId)) {
    return fetched.assign(new arrow.Table({ _distance: arrow.vectorFromArray(Float32Array.from(page, (h) => h.distance)) }));
  }
  const position = new Map<bigint, number>();
  for (let i = 0; i < fetched.numRows; i++) position.set(ids.get(i) as bigint, i);
  const schema = new arrow.Schema([...fetched.schema.fields, new arrow.Field('_distance', new arrow.Float32(), false)]);
  const struct = new arrow.Struct(schema.fields);
  const batches: arrow.RecordBatch[] = [];
  for (const h of page) {
    const at = position.get(h.rowId);
    if (at === undefined) continue;
    const row = fetched.slice(at, at + 1).batches.find((b) => b.numRows === 1)!;
    const distance = arrow.makeData({ type: new arrow.Float32(), length: 1, nullCount: 0, data: Float32Array.of(h.distance) });
    batches.push(new arrow.RecordBatch(schema, arrow.makeData({ type: struct, length: 1, nullCount: 0, children: [...row.data.children, distance] })));
  }
  return new arrow.Table(schema, batches);
}
