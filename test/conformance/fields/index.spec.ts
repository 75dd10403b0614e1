/**
 * The fields of the index operations (see coverage.ts for the tokens). What an index was built
 * with is read back from Lance itself: the lancedb library's own description of the table's
 * indexes (its index details), opened read-only at the table's location.
 */
import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import { basename, dirname } from 'node:path';
import { ARROW, NS, T, arrowStream, createTable, expectError, ok, query, revision, rows, settled, suiteServer } from './fixtures';
import { covers } from './coverage';

/** `rows` with a free text column and a list of labels. */
const texts = (n: number) => {
  const base = rows(0, n);
  const words = ['Café au lait', 'running dogs', 'THE quick fox', 'naïve bayes'];
  return new arrow.Table({
    id: base.getChild('id')!,
    vector: base.getChild('vector')!,
    text: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `${words[i % 4]} ${i}`), new arrow.Utf8()),
    category: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => ['a', 'b', 'c'][i % 3]), new arrow.Utf8()),
    labels: arrow.vectorFromArray(
      Array.from({ length: n }, (_, i) => [`l${i % 2}`, `m${i % 5}`]),
      new arrow.List(new arrow.Field('item', new arrow.Utf8(), true)),
    ),
  });
};

describe('index operations, field by field', () => {
  const s = suiteServer();
  const api = () => s.api;
  const locations = new Map<string, string>();

  /** Lance's own account of a table's indexes: type, columns and the details it was built with. */
  const described = async (name: string) => {
    const location = locations.get(name)!;
    const db = await lancedb.connect(dirname(location));
    try {
      const table = await db.openTable(basename(location).replace(/\.lance$/, ''));
      const indexes = await table.listIndices();
      table.close();
      return Object.fromEntries(indexes.map((i) => [i.name, i])) as Record<string, lancedb.IndexConfig & { indexDetails?: any }>;
    } finally {
      db.close();
    }
  };
  const build = async (table: string, body: object, route = 'create_index') => {
    const res = await ok(api().post(`${T('i', table)}/${route}`, body));
    expect(res.body).toEqual({ transaction_id: expect.any(String), index_name: expect.any(String) });
    const done = await settled(api(), res.body.transaction_id);
    expect([done.status, done.properties.reason]).toEqual(['Succeeded', undefined]);
    return res.body.index_name as string;
  };
  const partitions = async (table: string) =>
    Number(/partitions_ranked=(\d+)/.exec((await ok(api().post(`${T('i', table)}/analyze_plan`, { k: 3, vector: [1, 1, 1, 1] }))).body)![1]);

  beforeAll(async () => {
    await ok(api().post(`${NS('i')}/create`, {}));
    for (const name of ['pq', 'hnsw', 'flat', 'fts', 'scalar', 'listed']) locations.set(name, (await createTable(api(), ['i', name], texts(300))).location);
  }, 60_000);

  covers(
    [
      'CreateTableIndex#200',
      'CreateTableIndex.column',
      'CreateTableIndex.index_type',
      'CreateTableIndex.name',
      'CreateTableIndex.distance_type',
      'CreateTableIndex.num_partitions',
      'CreateTableIndex.num_sub_vectors',
      'CreateTableIndex.num_bits',
      'CreateTableIndex.sample_rate',
      'CreateTableIndex.max_iterations',
    ],
    'builds the IVF_PQ index asked for, with the name, metric, partitions, sub-vectors, bits, sample rate and iterations given',
    async () => {
      const body = { column: 'vector', index_type: 'IVF_PQ', name: 'pq_index', distance_type: 'cosine', num_partitions: 3, num_sub_vectors: 4, num_bits: 4, sample_rate: 64, max_iterations: 7 };
      expect(await build('pq', body)).toBe('pq_index');
      const index = (await described('pq')).pq_index;
      expect(index).toMatchObject({ indexType: 'IvfPq', columns: ['vector'] });
      expect(index.indexDetails).toMatchObject({
        metric_type: 'COSINE',
        compression: { type: 'pq', num_sub_vectors: 4, num_bits: 4 },
        runtime_hints: { 'lance.ivf.sample_rate': '64', 'lance.ivf.max_iters': '7' },
      });
      expect(await partitions('pq')).toBe(3);
      expect((await ok(api().post(`${T('i', 'pq')}/index/pq_index/stats`, {}))).body).toMatchObject({ index_type: 'IVF_PQ', distance_type: 'cosine', num_indexed_rows: 300 });
      // Without a name, one is made from the column.
      expect(await build('fts', { column: 'category', index_type: 'BITMAP' })).toBe('category_idx');
    },
  );

  covers(['CreateTableIndex.m', 'CreateTableIndex.ef_construction'], 'builds the HNSW graph with the edges per node and the construction breadth given', async () => {
    await build('hnsw', { column: 'vector', index_type: 'IVF_HNSW_SQ', num_partitions: 1, m: 6, ef_construction: 33 });
    expect((await described('hnsw')).vector_idx.indexDetails).toMatchObject({ hnsw: { max_connections: 6, construction_ef: 33 } });
  });

  covers(['CreateTableIndex.target_partition_size'], 'makes as many partitions as the rows need at the partition size given', async () => {
    await build('flat', { column: 'vector', index_type: 'IVF_FLAT', target_partition_size: 60 });
    expect(await partitions('flat')).toBe(5);
    expectError(await api().post(`${T('i', 'flat')}/create_index`, { column: 'vector', index_type: 'IVF_PQ', num_partitions: 2, target_partition_size: 60 }), 400, 13, /not both/);
  });

  const FTS = { with_position: true, base_tokenizer: 'whitespace', language: 'French', max_token_length: 20, lower_case: false, stem: false, remove_stop_words: false, ascii_folding: false };
  covers(
    [
      'CreateTableIndex.with_position',
      'CreateTableIndex.base_tokenizer',
      'CreateTableIndex.language',
      'CreateTableIndex.max_token_length',
      'CreateTableIndex.lower_case',
      'CreateTableIndex.stem',
      'CreateTableIndex.remove_stop_words',
      'CreateTableIndex.ascii_folding',
    ],
    'builds the full-text index with every tokenizer option given',
    async () => {
      await build('fts', { column: 'text', index_type: 'FTS', name: 'text_fts', ...FTS });
      expect((await described('fts')).text_fts.indexDetails).toMatchObject(FTS);
      // Case is kept: the capitalised word matches as written only.
      const hits = async (term: string) =>
        (await query(s.url, ['i', 'fts'], { k: 300, vector: [], full_text_query: { string_query: { query: term } }, columns: { column_names: ['id'] } })).rows.length;
      expect(await hits('THE')).toBe(75);
      expect(await hits('the')).toBe(0);
    },
  );

  covers(
    [
      'CreateTableScalarIndex#200',
      'CreateTableScalarIndex.column',
      'CreateTableScalarIndex.index_type',
      'CreateTableScalarIndex.name',
      'CreateTableScalarIndex.with_position',
      'CreateTableScalarIndex.base_tokenizer',
      'CreateTableScalarIndex.language',
      'CreateTableScalarIndex.max_token_length',
      'CreateTableScalarIndex.lower_case',
      'CreateTableScalarIndex.stem',
      'CreateTableScalarIndex.remove_stop_words',
      'CreateTableScalarIndex.ascii_folding',
    ],
    'builds the scalar index asked for (BTREE, BITMAP, LABEL_LIST, FTS with its options) under the name given',
    async () => {
      expect(await build('scalar', { column: 'id', index_type: 'BTREE', name: 'by_id' }, 'create_scalar_index')).toBe('by_id');
      await build('scalar', { column: 'category', index_type: 'BITMAP' }, 'create_scalar_index');
      await build('scalar', { column: 'labels', index_type: 'LABEL_LIST' }, 'create_scalar_index');
      await build('scalar', { column: 'text', index_type: 'FTS', ...FTS }, 'create_scalar_index');
      const indexes = await described('scalar');
      expect(Object.fromEntries(Object.entries(indexes).map(([n, i]) => [n, [i.indexType, i.columns]]))).toEqual({
        by_id: ['BTree', ['id']],
        category_idx: ['Bitmap', ['category']],
        labels_idx: ['LabelList', ['labels']],
        text_idx: ['FTS', ['text']],
      });
      expect(indexes.text_idx.indexDetails).toMatchObject(FTS);
      expectError(await api().post(`${T('i', 'scalar')}/create_scalar_index`, { column: 'vector', index_type: 'IVF_PQ' }), 400, 13, /not a scalar index/);
    },
  );

  const VECTOR_OPTIONS = { distance_type: 'cosine', num_partitions: 2, num_sub_vectors: 2, num_bits: 8, sample_rate: 64, max_iterations: 5, target_partition_size: 50, m: 8, ef_construction: 50 };
  covers(
    Object.keys(VECTOR_OPTIONS).map((k) => `CreateTableScalarIndex.${k}`),
    "refuses a vector index's option on a scalar index (400 code 13 naming it), building nothing",
    async () => {
      const before = await revision(api());
      for (const [option, value] of Object.entries(VECTOR_OPTIONS)) {
        expectError(await api().post(`${T('i', 'scalar')}/create_scalar_index`, { column: 'score', index_type: 'BTREE', [option]: value }), 400, 13, new RegExp(option));
      }
      expect(await revision(api())).toBe(before);
    },
  );

  covers(['ListTableIndices#200', 'ListTableIndices.limit', 'ListTableIndices.page_token'], 'lists the indexes with their status, limit at a time after page_token', async () => {
    for (const [column, type] of [['id', 'BTREE'], ['category', 'BITMAP'], ['text', 'FTS']]) await build('listed', { column, index_type: type });
    const all = (await ok(api().post(`${T('i', 'listed')}/index/list`, {}))).body;
    expect(all).toEqual({
      indexes: [
        { index_name: 'category_idx', index_uuid: expect.any(String), columns: ['category'], status: 'ready', index_type: 'BITMAP' },
        { index_name: 'id_idx', index_uuid: expect.any(String), columns: ['id'], status: 'ready', index_type: 'BTREE' },
        { index_name: 'text_idx', index_uuid: expect.any(String), columns: ['text'], status: 'ready', index_type: 'FTS' },
      ],
      page_token: null,
    });
    const first = (await ok(api().post(`${T('i', 'listed')}/index/list`, { limit: 2 }))).body;
    expect([first.indexes.map((i: { index_name: string }) => i.index_name), first.page_token]).toEqual([['category_idx', 'id_idx'], 'id_idx']);
    const rest = (await ok(api().post(`${T('i', 'listed')}/index/list`, { limit: 2, page_token: 'id_idx' }))).body;
    expect([rest.indexes.map((i: { index_name: string }) => i.index_name), rest.page_token]).toEqual([['text_idx'], null]);
  });

  covers(['ListTableIndices.version'], 'lists the indexes Lance holds at the version asked for, not those built since; a version that does not exist is 404 code 11', async () => {
    await createTable(api(), ['i', 'versioned'], texts(50));
    const before = (await ok(api().post(`${T('i', 'versioned')}/describe`, { load_detailed_metadata: true }))).body.version;
    await build('versioned', { column: 'id', index_type: 'BTREE' });
    const latest = (await ok(api().post(`${T('i', 'versioned')}/index/list`, {}))).body.indexes.map((i: { index_name: string }) => i.index_name);
    expect(latest).toEqual(['id_idx']);
    expect((await ok(api().post(`${T('i', 'versioned')}/index/list`, { version: before }))).body.indexes).toEqual([]);
    expectError(await api().post(`${T('i', 'versioned')}/index/list`, { version: 999 }), 404, 11);
  });

  covers(['DescribeTableIndexStats#200', 'DescribeTableIndexStats.version', 'DescribeTableIndexStats.index_name'], "answers the index's statistics, at the version asked for; the body's index_name must be the path's", async () => {
    await ok(api().send('POST', `${T('i', 'listed')}/insert`, arrowStream(texts(10)), ARROW));
    const latest = (await ok(api().post(`${T('i', 'listed')}/index/id_idx/stats`, {}))).body;
    expect(latest).toEqual({ index_type: 'BTREE', num_indexed_rows: 300, num_unindexed_rows: 10, num_indices: 1 });
    // At a version before its build the index does not exist there (as ListTableIndices at that version says).
    expectError(await api().post(`${T('i', 'listed')}/index/id_idx/stats`, { version: 1 }), 404, 6);
    const built = (await ok(api().post(`${T('i', 'listed')}/index/list`, {}))).body.indexes.length;
    expect(built).toBe(3);
    expect((await ok(api().post(`${T('i', 'listed')}/index/id_idx/stats`, { index_name: 'id_idx' }))).body).toEqual(latest);
    expectError(await api().post(`${T('i', 'listed')}/index/id_idx/stats`, { index_name: 'text_idx' }), 400, 13, /index_name/);
    expectError(await api().post(`${T('i', 'listed')}/index/nothing/stats`, {}), 404, 6);
  });

  covers(['DropTableIndex#200'], 'drops the index', async () => {
    expect((await ok(api().post(`${T('i', 'listed')}/index/category_idx/drop`, {}))).body).toEqual({ transaction_id: expect.any(String) });
    expect((await ok(api().post(`${T('i', 'listed')}/index/list`, {}))).body.indexes.map((i: { index_name: string }) => i.index_name)).toEqual(['id_idx', 'text_idx']);
    expect(Object.keys(await described('listed')).sort()).toEqual(['id_idx', 'text_idx']);
    expectError(await api().post(`${T('i', 'listed')}/index/category_idx/drop`, {}), 404, 6);
  });
});
