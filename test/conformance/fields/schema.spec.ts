/** The fields of the operations on a table's columns, computed columns and their backfill (see coverage.ts for the tokens). */
import * as arrow from 'apache-arrow';
import { ARROW, NS, T, TX, arrowStream, createTable, expectError, ok, query, revision, settled, suiteServer } from './fixtures';
import { covers } from './coverage';

const table = (idList: number[]) =>
  new arrow.Table({
    id: arrow.vectorFromArray(Int32Array.from(idList)),
    score: arrow.vectorFromArray(Float64Array.from(idList.map((i) => i / 2))),
    name: arrow.vectorFromArray(idList.map((i) => `n${i}`), new arrow.Utf8()),
  });

describe('column operations, field by field', () => {
  const s = suiteServer();
  const api = () => s.api;
  const schema = async (name: string) =>
    (await ok(api().post(`${T('c', name)}/describe?load_detailed_metadata=true`, {}))).body.schema.fields.map((f: { name: string; nullable: boolean; type: { type: string } }) => [f.name, f.type.type, f.nullable]);
  const rowsOf = async (name: string) => (await query(s.url, ['c', name], { k: 100, vector: [] })).rows;

  beforeAll(async () => {
    await ok(api().post(`${NS('c')}/create`, {}));
  });

  covers(['AlterTableAlterColumns#200', 'AlterTableAlterColumns.alterations', 'AlterTableAlterColumns.alterations.path', 'AlterTableAlterColumns.alterations.rename'], 'renames the column at the path, keeping its values', async () => {
    await createTable(api(), ['c', 'ren'], table([1, 2]));
    expect((await ok(api().post(`${T('c', 'ren')}/alter_columns`, { alterations: [{ path: 'name', rename: 'label' }] }))).body).toEqual({ transaction_id: expect.any(String), version: 2 });
    expect(await schema('ren')).toEqual([
      ['id', 'int32', false],
      ['score', 'float64', false],
      ['label', 'utf8', true],
    ]);
    expect((await rowsOf('ren')).map((r) => r.label)).toEqual(['n1', 'n2']);
    expectError(await api().post(`${T('c', 'ren')}/alter_columns`, { alterations: [{ path: 'nothing', rename: 'x' }] }), 404, 12);
  });

  covers(['AlterTableAlterColumns.alterations.data_type'], 'casts the column to the type given (JSON representation)', async () => {
    await createTable(api(), ['c', 'cast'], table([1, 2]));
    await ok(api().post(`${T('c', 'cast')}/alter_columns`, { alterations: [{ path: 'id', data_type: { type: 'int64' } }] }));
    expect((await schema('cast'))[0]).toEqual(['id', 'int64', false]);
    expect((await rowsOf('cast')).map((r) => Number(r.id))).toEqual([1, 2]);
  });

  covers(['AlterTableAlterColumns.alterations.nullable'], 'makes the column nullable', async () => {
    await createTable(api(), ['c', 'nul'], table([1]));
    await ok(api().post(`${T('c', 'nul')}/alter_columns`, { alterations: [{ path: 'score', nullable: true }] }));
    expect((await schema('nul'))[1]).toEqual(['score', 'float64', true]);
  });

  covers(['AlterTableAlterColumns.alterations.virtual_column', 'AlterTableAddColumns.new_columns.virtual_column'], 'a virtual (UDF) column is refused with 406 code 0 naming virtual_column, and nothing changes', async () => {
    await createTable(api(), ['c', 'virt'], table([1]));
    const before = await revision(api());
    expectError(await api().post(`${T('c', 'virt')}/alter_columns`, { alterations: [{ path: 'score', virtual_column: { udf: 'f', udf_name: 'f' } }] }), 406, 0, /virtual_column/);
    expectError(await api().post(`${T('c', 'virt')}/add_columns`, { new_columns: [{ name: 'v', virtual_column: { udf: 'f', udf_name: 'f' } }] }), 406, 0, /virtual_column/);
    expect(await revision(api())).toBe(before);
  });

  covers(['AlterTableDropColumns#200', 'AlterTableDropColumns.columns'], 'drops the columns named', async () => {
    await createTable(api(), ['c', 'drop'], table([1]));
    expect((await ok(api().post(`${T('c', 'drop')}/drop_columns`, { columns: ['score', 'name'] }))).body).toEqual({ transaction_id: expect.any(String), version: 2 });
    expect(await schema('drop')).toEqual([['id', 'int32', false]]);
    expectError(await api().post(`${T('c', 'drop')}/drop_columns`, { columns: ['nothing'] }), 404, 12);
  });

  covers(
    ['UpdateFieldMetadata#200', 'UpdateFieldMetadata.updates', 'UpdateFieldMetadata.updates.path', 'UpdateFieldMetadata.updates.metadata', 'UpdateFieldMetadata.updates.replace'],
    "merges the metadata into the field's (a null value deletes its key), or replaces it whole",
    async () => {
      await createTable(api(), ['c', 'meta'], table([1]));
      const set = (updates: object[]) => ok(api().post(`${T('c', 'meta')}/update_field_metadata`, { updates }));
      expect((await set([{ path: 'score', metadata: { unit: 'pt', source: 'raw' } }, { path: 'id', metadata: { key: 'yes' } }])).body).toEqual({
        transaction_id: expect.any(String),
        version: 2,
        fields: { score: { unit: 'pt', source: 'raw' }, id: { key: 'yes' } },
      });
      expect((await set([{ path: 'score', metadata: { source: null, scale: '10' } }])).body.fields).toEqual({ score: { unit: 'pt', scale: '10' } });
      expect((await set([{ path: 'score', metadata: { only: 'this' }, replace: true }])).body.fields).toEqual({ score: { only: 'this' } });
      // What the dataset holds: the metadata on its field.
      const scanned = await fetch(`${s.url}${T('c', 'meta')}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ k: 1, vector: [] }) });
      const fields = arrow.tableFromIPC(new Uint8Array(await scanned.arrayBuffer())).schema.fields;
      expect(Object.fromEntries(fields.find((f) => f.name === 'score')!.metadata)).toEqual({ only: 'this' });
      expect(Object.fromEntries(fields.find((f) => f.name === 'id')!.metadata)).toEqual({ key: 'yes' });
      expectError(await api().post(`${T('c', 'meta')}/update_field_metadata`, { updates: [{ path: 'nothing', metadata: { a: 'b' } }] }), 404, 12);
    },
  );

  covers(['AlterTableAddColumns#200', 'AlterTableAddColumns.new_columns', 'AlterTableAddColumns.new_columns.name', 'AlterTableAddColumns.new_columns.expression'], 'adds each column named, its values the expression of the row', async () => {
    await createTable(api(), ['c', 'add'], table([1, 2]));
    expect((await ok(api().post(`${T('c', 'add')}/add_columns`, { new_columns: [{ name: 'plus', expression: 'id + 100' }, { name: 'tag', expression: "concat(name, '!')" }] }))).body).toEqual({
      transaction_id: expect.any(String),
      version: 2,
    });
    expect((await rowsOf('add')).map((r) => [r.plus, r.tag])).toEqual([
      [101, 'n1!'],
      [102, 'n2!'],
    ]);
  });

  covers(['AlterTableAddColumns.new_columns.computed', 'AlterTableBackfillColumns#202', 'AlterTableBackfillColumns.column'], 'declares a computed column (no values yet); a backfill job fills its rows from its expression', async () => {
    await createTable(api(), ['c', 'comp'], table([1, 2, 3]));
    await ok(api().post(`${T('c', 'comp')}/add_columns`, { new_columns: [{ name: 'doubled', computed: 'id * 2' }] }));
    expect((await rowsOf('comp')).map((r) => r.doubled)).toEqual([null, null, null]);
    const job = (await ok(api().post(`${T('c', 'comp')}/backfill_column`, { column: 'doubled' }), 202)).body;
    expect(job).toEqual({ job_id: expect.any(String) });
    const done = await settled(api(), job.job_id);
    expect(done).toMatchObject({ status: 'Succeeded', properties: { operation: 'AlterTableBackfillColumns', column: 'doubled', rows_filled: '3' } });
    expect((await rowsOf('comp')).map((r) => r.doubled)).toEqual([2, 4, 6]);
    // Rows appended since are filled by the next backfill, and only they.
    await ok(api().send('POST', `${T('c', 'comp')}/insert`, arrowStream(table([4])), ARROW));
    const next = await settled(api(), (await ok(api().post(`${T('c', 'comp')}/backfill_column`, { column: 'doubled' }), 202)).body.job_id);
    expect(next.properties.rows_filled).toBe('1');
    expect((await rowsOf('comp')).map((r) => r.doubled)).toEqual([2, 4, 6, 8]);
    expectError(await api().post(`${T('c', 'comp')}/backfill_column`, { column: 'score' }), 400, 13, /not a computed column/);
    expectError(await api().post(`${T('c', 'comp')}/backfill_column`, { column: 'nothing' }), 404, 12);
  });

  covers(['AlterTableBackfillColumns.where', 'AlterTableBackfillColumns.read_version'], "a filter, or a version to read other than the latest, is refused with 406 code 0 naming the field: Lance's refresh has neither", async () => {
    await createTable(api(), ['c', 'nofilter'], table([1, 2]));
    await ok(api().post(`${T('c', 'nofilter')}/add_columns`, { new_columns: [{ name: 'doubled', computed: 'id * 2' }] }));
    const before = await revision(api());
    expectError(await api().post(`${T('c', 'nofilter')}/backfill_column`, { column: 'doubled', where: 'id > 1' }), 406, 0, /where/);
    expectError(await api().post(`${T('c', 'nofilter')}/backfill_column`, { column: 'doubled', read_version: 1 }), 406, 0, /read_version/);
    expect(await revision(api())).toBe(before);
  });

  covers(
    [
      'AlterTableBackfillColumns.concurrency',
      'AlterTableBackfillColumns.intra_applier_concurrency',
      'AlterTableBackfillColumns.min_checkpoint_size',
      'AlterTableBackfillColumns.max_checkpoint_size',
      'AlterTableBackfillColumns.batch_checkpoint_flush_interval_seconds',
      'AlterTableBackfillColumns.task_size',
      'AlterTableBackfillColumns.num_frags',
      'AlterTableBackfillColumns.checkpoint_size',
      'AlterTableBackfillColumns.commit_granularity',
      'AlterTableBackfillColumns.cluster',
      'AlterTableBackfillColumns.manifest',
    ],
    "how a distributed job is to run is kept with the job (its transaction's properties); one worker job fills the column whole",
    async () => {
      await createTable(api(), ['c', 'tuned'], table([1, 2]));
      await ok(api().post(`${T('c', 'tuned')}/add_columns`, { new_columns: [{ name: 'doubled', computed: 'id * 2' }] }));
      const options = {
        concurrency: 4,
        intra_applier_concurrency: 2,
        min_checkpoint_size: 10,
        max_checkpoint_size: 100,
        batch_checkpoint_flush_interval_seconds: 1.5,
        task_size: 64,
        num_frags: 1,
        checkpoint_size: 50,
        commit_granularity: 2,
        cluster: 'gpu-pool',
        manifest: 'env-2024',
      };
      const job = (await ok(api().post(`${T('c', 'tuned')}/backfill_column`, { column: 'doubled', ...options }), 202)).body.job_id;
      const done = await settled(api(), job);
      expect(done.status).toBe('Succeeded');
      expect(done.properties).toMatchObject(Object.fromEntries(Object.entries(options).map(([k, v]) => [k, String(v)])));
      expect((await rowsOf('tuned')).map((r) => r.doubled)).toEqual([2, 4]);
      // The caller may not rewrite what it asked for.
      expectError(await api().post(`${TX(job)}/alter`, { actions: [{ setPropertyAction: { key: 'cluster', value: 'other' } }] }), 403, 15);
    },
  );

  covers(['UpdateTableSchemaMetadata#200'], "replaces the table's schema metadata with the map given, in a version of its own that Lance reads", async () => {
    await createTable(api(), ['c', 'smeta'], table([1, 2]));
    const answer = await ok(api().post(`${T('c', 'smeta')}/schema_metadata/update`, { owner: 'etl', tier: 'gold' }));
    expect(answer.body).toEqual({ owner: 'etl', tier: 'gold' });
    expect((await ok(api().post(`${T('c', 'smeta')}/describe`, { load_detailed_metadata: true }))).body.version).toBe(2);
    expect((await ok(api().post(`${T('c', 'smeta')}/schema_metadata/update`, { tier: 'silver' }))).body).toEqual({ tier: 'silver' });
    expect((await rowsOf('smeta')).map((r) => r.id)).toEqual([1, 2]);
  });

  covers(['UpdateTableSchemaMetadata?branch'], "changes the branch's line only, leaving main's schema metadata as it was", async () => {
    await createTable(api(), ['c', 'metab'], table([1]));
    await ok(api().post(`${T('c', 'metab')}/branches/create`, { name: 'dev' }));
    expect((await ok(api().post(`${T('c', 'metab')}/schema_metadata/update?branch=dev`, { on: 'dev' }))).body).toEqual({ on: 'dev' });
    const versions = async (query: string) => (await ok(api().post(`${T('c', 'metab')}/version/list${query}`, {}))).body.versions.length;
    expect(await versions('')).toBe(1);
    expect(await versions('?branch=dev')).toBe(2);
    expectError(await api().post(`${T('c', 'metab')}/schema_metadata/update?branch=nope`, { on: 'x' }), 404, 22);
  });
});
