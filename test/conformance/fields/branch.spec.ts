/**
 * The branch operations' fields, and every other operation's `branch` (body field or query
 * parameter): each acts on the branch named and leaves main as it was (see coverage.ts for the
 * tokens). Each test works on a table of its own: main holds 4 rows (versions 1 and 2), its
 * branch `dev` starts at main's version 2 and holds 6 rows at its version 3.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { ARROW, NS, T, arrowStream, count, createTable, expectError, ids, ok, query, rows, settled, suiteServer } from './fixtures';
import { covers } from './coverage';

describe('branches, field by field', () => {
  const s = suiteServer();
  const api = () => s.api;
  const dev = { branch: 'dev' };

  /** A table of its own with its `dev` branch; answers its location. */
  const fresh = async (name: string): Promise<string> => {
    const { location } = await createTable(api(), ['b', name], rows(0, 2));
    await ok(api().send('POST', `${T('b', name)}/insert`, arrowStream(rows(2, 2)), ARROW));
    await ok(api().post(`${T('b', name)}/branches/create`, { name: 'dev' }));
    await ok(api().send('POST', `${T('b', name)}/insert?branch=dev`, arrowStream(rows(4, 2)), ARROW));
    return location;
  };
  const versions = async (name: string, query = '') => (await ok(api().post(`${T('b', name)}/version/list${query}`, null))).body.versions.map((v: { version: number }) => v.version);
  const columns = async (name: string, branch?: string) =>
    (await query(s.url, ['b', name], { k: 1, vector: [], ...(branch ? { branch } : {}) })).columns;

  beforeAll(async () => {
    await ok(api().post(`${NS('b')}/create`, {}));
  });

  covers(['CreateTableBranch#200', 'CreateTableBranch.name', 'InsertIntoTable?branch', 'CountTableRows.branch', 'QueryTable.branch'], "makes a branch of main's latest version; writes and reads on it leave main alone", async () => {
    await createTable(api(), ['b', 'basic'], rows(0, 4));
    expect((await ok(api().post(`${T('b', 'basic')}/branches/create`, { name: 'dev' }))).body).toEqual({ transaction_id: expect.any(String) });
    expect(await count(api(), ['b', 'basic'], dev)).toBe(4);
    expect((await ok(api().send('POST', `${T('b', 'basic')}/insert?branch=dev`, arrowStream(rows(4, 2)), ARROW))).body.num_inserted_rows).toBe(2);
    expect([await count(api(), ['b', 'basic']), await count(api(), ['b', 'basic'], dev)]).toEqual([4, 6]);
    expect(await ids(s.url, ['b', 'basic'], { k: 10, vector: [], branch: 'dev' })).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await ids(s.url, ['b', 'basic'], { k: 10, vector: [] })).toEqual([0, 1, 2, 3]);
    expectError(await api().post(`${T('b', 'basic')}/count_rows`, { branch: 'nope' }), 404, 22);
  });

  covers(['CreateTableBranch.from_branch', 'CreateTableBranch.from_version'], 'starts the branch from the branch and version given', async () => {
    await fresh('from');
    await ok(api().post(`${T('b', 'from')}/branches/create`, { name: 'old', from_version: 1 }));
    await ok(api().post(`${T('b', 'from')}/branches/create`, { name: 'child', from_branch: 'dev' }));
    await ok(api().post(`${T('b', 'from')}/branches/create`, { name: 'child_old', from_branch: 'dev', from_version: 2 }));
    expect([await count(api(), ['b', 'from'], { branch: 'old' }), await count(api(), ['b', 'from'], { branch: 'child' }), await count(api(), ['b', 'from'], { branch: 'child_old' })]).toEqual([2, 6, 4]);
    expectError(await api().post(`${T('b', 'from')}/branches/create`, { name: 'x', from_version: 42 }), 404, 11);
    expectError(await api().post(`${T('b', 'from')}/branches/create`, { name: 'x', from_branch: 'nope' }), 404, 22);
  });

  covers(['CreateTableBranch#409'], 'a branch name taken is 409 code 23', async () => {
    expectError(await api().post(`${T('b', 'from')}/branches/create`, { name: 'dev' }), 409, 23);
    expect(await count(api(), ['b', 'from'], dev)).toBe(6);
  });

  covers(['ListTableBranches#200', 'ListTableBranches?limit', 'ListTableBranches?page_token'], 'lists the branches with the versions they started from, limit at a time after page_token', async () => {
    const all = (await ok(api().post(`${T('b', 'from')}/branches/list`, null))).body;
    expect(Object.keys(all.branches)).toEqual(['child', 'child_old', 'dev', 'old']);
    expect(all.branches.old).toMatchObject({ parentVersion: 1 });
    expect(all.branches.child).toMatchObject({ parentBranch: 'dev', parentVersion: 3 });
    expect(all.page_token).toBeNull();
    const first = (await ok(api().post(`${T('b', 'from')}/branches/list?limit=2`, null))).body;
    expect([Object.keys(first.branches), first.page_token]).toEqual([['child', 'child_old'], 'child_old']);
    const rest = (await ok(api().post(`${T('b', 'from')}/branches/list?limit=2&page_token=child_old`, null))).body;
    expect([Object.keys(rest.branches), rest.page_token]).toEqual([['dev', 'old'], null]);
  });

  covers(['DeleteTableBranch#200', 'DeleteTableBranch.name'], 'deletes the branch named; one other branches start from is 409 code 19', async () => {
    expect((await ok(api().post(`${T('b', 'from')}/branches/delete`, { name: 'old' }))).body).toEqual({ transaction_id: expect.any(String) });
    expectError(await api().post(`${T('b', 'from')}/count_rows`, { branch: 'old' }), 404, 22);
    expectError(await api().post(`${T('b', 'from')}/branches/delete`, { name: 'dev' }), 409, 19);
    expect(await count(api(), ['b', 'from'])).toBe(4);
  });

  covers(['MergeInsertIntoTable?branch', 'UpdateTable.branch', 'DeleteFromTable.branch'], 'merges, updates and deletes on the branch only', async () => {
    await fresh('mut');
    await ok(api().send('POST', `${T('b', 'mut')}/merge_insert?on=id&when_not_matched_insert_all=true&branch=dev`, arrowStream(rows(10, 1)), ARROW));
    await ok(api().post(`${T('b', 'mut')}/update`, { updates: [['score', '100']], predicate: 'id = 0', branch: 'dev' }));
    await ok(api().post(`${T('b', 'mut')}/delete`, { predicate: 'id = 1', branch: 'dev' }));
    // An updated row is rewritten at the end: compared as a set.
    expect((await ids(s.url, ['b', 'mut'], { k: 20, vector: [], branch: 'dev' })).sort((a, b) => a - b)).toEqual([0, 2, 3, 4, 5, 10]);
    expect((await query(s.url, ['b', 'mut'], { k: 1, vector: [], branch: 'dev', filter: 'id = 0' })).rows[0].score).toBe(100);
    expect(await ids(s.url, ['b', 'mut'], { k: 20, vector: [] })).toEqual([0, 1, 2, 3]);
    expect((await query(s.url, ['b', 'mut'], { k: 1, vector: [], filter: 'id = 0' })).rows[0].score).toBe(0);
  });

  covers(['DescribeTable.branch', 'GetTableStats.branch'], "describes the branch's latest version, and its statistics", async () => {
    await fresh('desc');
    expect((await ok(api().post(`${T('b', 'desc')}/describe?load_detailed_metadata=true`, dev))).body).toMatchObject({ version: 3, stats: { num_fragments: 3 } });
    expect((await ok(api().post(`${T('b', 'desc')}/describe?load_detailed_metadata=true`, {}))).body).toMatchObject({ version: 2, stats: { num_fragments: 2 } });
    expect((await ok(api().post(`${T('b', 'desc')}/stats`, dev))).body.num_rows).toBe(6);
    expect((await ok(api().post(`${T('b', 'desc')}/stats`, {}))).body.num_rows).toBe(4);
  });

  covers(['ListTableVersions?branch', 'DescribeTableVersion.branch', 'RestoreTable.branch'], "lists, describes and restores the branch's own versions", async () => {
    const location = await fresh('vers');
    expect(await versions('vers', '?branch=dev')).toEqual([2, 3]);
    expect(await versions('vers')).toEqual([1, 2]);
    expect((await ok(api().post(`${T('b', 'vers')}/version/describe`, { version: 3, branch: 'dev' }))).body.version.manifest_path).toContain(`${location.slice(1)}/tree/dev/_versions/`);
    expectError(await api().post(`${T('b', 'vers')}/version/describe`, { version: 3 }), 404, 11);
    expect((await ok(api().post(`${T('b', 'vers')}/restore`, { version: 2, branch: 'dev' }))).body.version).toBe(4);
    expect(await count(api(), ['b', 'vers'], dev)).toBe(4);
    expect(await versions('vers')).toEqual([1, 2]);
  });

  covers(['CreateTableVersion.branch', 'BatchCreateTableVersions.entries.branch', 'BatchDeleteTableVersions.branch'], "commits and deletes versions of the branch's own line", async () => {
    const location = await fresh('commits');
    const branchVersions = `${location}/tree/dev/_versions`;
    const latest = readFileSync(`${branchVersions}/${readdirSync(branchVersions).filter((f) => f.endsWith('.manifest')).sort()[0]}`);
    const stage = (version: number) => {
      mkdirSync(branchVersions, { recursive: true });
      const path = `${branchVersions}/${18446744073709551615n - BigInt(version)}.manifest-${randomUUID()}`;
      writeFileSync(path, latest);
      return path.slice(1);
    };
    const made = (await ok(api().post(`${T('b', 'commits')}/version/create`, { version: 4, manifest_path: stage(4), branch: 'dev' }))).body;
    expect(made.version.manifest_path).toBe(`${branchVersions.slice(1)}/18446744073709551611.manifest`);
    await ok(api().post('/v1/table/version/batch-create', { entries: [{ id: ['b', 'commits'], version: 5, manifest_path: stage(5), branch: 'dev' }] }));
    expect(await versions('commits', '?branch=dev')).toEqual([2, 3, 4, 5]);
    expect(await versions('commits')).toEqual([1, 2]);
    expect((await ok(api().post(`${T('b', 'commits')}/version/delete`, { ranges: [{ start_version: 4, end_version: 5 }], branch: 'dev' }))).body.deleted_count).toBe(1);
    expect(await versions('commits', '?branch=dev')).toEqual([2, 3, 5]);
    expect(await versions('commits')).toEqual([1, 2]);
  });

  covers(
    ['AlterTableAddColumns.branch', 'AlterTableAlterColumns.branch', 'AlterTableDropColumns.branch', 'UpdateFieldMetadata.branch'],
    "changes the branch's columns only",
    async () => {
      await fresh('cols');
      await ok(api().post(`${T('b', 'cols')}/add_columns`, { new_columns: [{ name: 'plus', expression: 'id + 1' }], branch: 'dev' }));
      await ok(api().post(`${T('b', 'cols')}/alter_columns`, { alterations: [{ path: 'name', rename: 'label' }], branch: 'dev' }));
      await ok(api().post(`${T('b', 'cols')}/drop_columns`, { columns: ['score'], branch: 'dev' }));
      const meta = (await ok(api().post(`${T('b', 'cols')}/update_field_metadata`, { updates: [{ path: 'id', metadata: { on: 'dev' } }], branch: 'dev' }))).body;
      expect(meta.fields).toEqual({ id: { on: 'dev' } });
      expect(await columns('cols', 'dev')).toEqual(['id', 'label', 'vector', 'plus']);
      expect(await columns('cols')).toEqual(['id', 'name', 'score', 'vector']);
      const mainSchema = (await ok(api().post(`${T('b', 'cols')}/describe?load_detailed_metadata=true`, {}))).body.schema.fields;
      expect(mainSchema.find((f: { name: string }) => f.name === 'id').metadata ?? {}).toEqual({});
    },
  );

  covers(['AlterTableBackfillColumns.branch'], "fills the branch's computed column", async () => {
    await fresh('fill');
    await ok(api().post(`${T('b', 'fill')}/add_columns`, { new_columns: [{ name: 'doubled', computed: 'id * 2' }], branch: 'dev' }));
    const job = (await ok(api().post(`${T('b', 'fill')}/backfill_column`, { column: 'doubled', branch: 'dev' }), 202)).body.job_id;
    expect(await settled(api(), job)).toMatchObject({ status: 'Succeeded', properties: { branch: 'dev', rows_filled: '6' } });
    expect((await query(s.url, ['b', 'fill'], { k: 10, vector: [], branch: 'dev' })).rows.map((r) => r.doubled)).toEqual([0, 2, 4, 6, 8, 10]);
    expectError(await api().post(`${T('b', 'fill')}/backfill_column`, { column: 'doubled' }), 404, 12);
  });

  covers(
    ['CreateTableIndex.branch', 'CreateTableScalarIndex.branch', 'ListTableIndices.branch', 'DescribeTableIndexStats.branch', 'DropTableIndex?branch'],
    "builds, lists, describes and drops the branch's own indexes",
    async () => {
      await fresh('idx');
      const built = [
        (await ok(api().post(`${T('b', 'idx')}/create_index`, { column: 'id', index_type: 'BTREE', branch: 'dev' }))).body.transaction_id,
        (await ok(api().post(`${T('b', 'idx')}/create_scalar_index`, { column: 'name', index_type: 'BITMAP', branch: 'dev' }))).body.transaction_id,
      ];
      for (const t of built) expect((await settled(api(), t)).status).toBe('Succeeded');
      const listed = async (body: object) => (await ok(api().post(`${T('b', 'idx')}/index/list`, body))).body.indexes.map((i: { index_name: string }) => i.index_name);
      expect(await listed(dev)).toEqual(['id_idx', 'name_idx']);
      expect(await listed({})).toEqual([]);
      expect((await ok(api().post(`${T('b', 'idx')}/index/id_idx/stats`, dev))).body).toMatchObject({ index_type: 'BTREE', num_indexed_rows: 6 });
      expectError(await api().post(`${T('b', 'idx')}/index/id_idx/stats`, {}), 404, 6);
      await ok(api().post(`${T('b', 'idx')}/index/id_idx/drop?branch=dev`, {}));
      expect(await listed(dev)).toEqual(['name_idx']);
      expectError(await api().post(`${T('b', 'idx')}/index/name_idx/drop`, {}), 404, 6);
    },
  );

  covers(['ExplainTableQueryPlan.branch', 'AnalyzeTableQueryPlan.branch'], "plans and runs the query on the branch's data", async () => {
    const location = await fresh('plans');
    const explained = (await ok(api().post(`${T('b', 'plans')}/explain_plan`, { query: { k: 10, vector: [] }, branch: 'dev' }))).body;
    expect(explained).toContain(`${location.slice(1)}/tree/dev/`);
    expect((await ok(api().post(`${T('b', 'plans')}/explain_plan`, { query: { k: 10, vector: [] } }))).body).not.toContain('/tree/dev/');
    const rowsRead = async (body: object) => Number(/output_rows=(\d+)/.exec((await ok(api().post(`${T('b', 'plans')}/analyze_plan`, { k: 10, vector: [], ...body }))).body)![1]);
    expect([await rowsRead(dev), await rowsRead({})]).toEqual([6, 4]);
  });
});
