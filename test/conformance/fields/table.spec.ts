/** The fields of the operations on a table's catalog entry (see coverage.ts for the tokens). */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { ARROW, NS, T, arrowStream, count, createTable, expectError, newestEvents, ok, rows, suiteServer } from './fixtures';
import { covers } from './coverage';

describe('table operations, field by field', () => {
  const s = suiteServer({ entry: 'api', env: { DROP_RETENTION_SECONDS: '3600' } });
  const api = () => s.api;
  let location = '';

  beforeAll(async () => {
    await ok(api().post(`${NS('t')}/create`, {}));
    await ok(api().post(`${NS('u')}/create`, {}));
    location = (await createTable(api(), ['t', 'main'], rows(0, 3))).location;
    // Version 2 holds 5 rows; tag `first` names version 1.
    await ok(api().send('POST', `${T('t', 'main')}/insert`, arrowStream(rows(3, 2)), ARROW));
    await ok(api().post(`${T('t', 'main')}/tags/create`, { tag: 'first', version: 1 }));
    await ok(api().post(`${T('t', 'declared')}/declare`, {}));
  });

  covers(['DescribeTable#200', 'DescribeTable.load_detailed_metadata', 'DescribeTable?load_detailed_metadata'], 'answers the location; the schema and stats only with load_detailed_metadata (body or query)', async () => {
    const plain = (await ok(api().post(`${T('t', 'main')}/describe`, {}))).body;
    expect(plain).toMatchObject({ location, managed_versioning: true, properties: {} });
    expect(plain).not.toHaveProperty('schema');
    expect(plain).not.toHaveProperty('stats');
    for (const res of [await api().post(`${T('t', 'main')}/describe`, { load_detailed_metadata: true }), await api().post(`${T('t', 'main')}/describe?load_detailed_metadata=true`, {})]) {
      expect(res.body).toMatchObject({ version: 2, table: 'main', namespace: ['t'], stats: { num_deleted_rows: 0, num_fragments: 2 } });
      expect(res.body.schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'name', 'score', 'vector']);
    }
    // The query wins over the body.
    expect((await ok(api().post(`${T('t', 'main')}/describe?load_detailed_metadata=false`, { load_detailed_metadata: true }))).body).not.toHaveProperty('schema');
  });

  covers(['DescribeTable.version', 'DescribeTable.tag'], 'describes the version asked for, or the one a tag names; a version or tag the table lacks is 404 (11, 8); a tag with a version is 400', async () => {
    const at = async (body: object) => (await ok(api().post(`${T('t', 'main')}/describe?load_detailed_metadata=true`, body))).body;
    expect((await at({})).version).toBe(2);
    expect(await at({ version: 1 })).toMatchObject({ version: 1, stats: { num_fragments: 1 } });
    expect(await at({ tag: 'first' })).toMatchObject({ version: 1, stats: { num_fragments: 1 } });
    expectError(await api().post(`${T('t', 'main')}/describe`, { version: 9 }), 404, 11);
    expectError(await api().post(`${T('t', 'main')}/describe`, { tag: 'nope' }), 404, 8);
    expectError(await api().post(`${T('t', 'main')}/describe`, { tag: 'first', version: 1 }), 400, 13, /tag cannot be used together with version or branch/);
  });

  covers(['DescribeTable.with_table_uri', 'DescribeTable?with_table_uri'], 'answers table_uri only when asked (body or query)', async () => {
    expect((await ok(api().post(`${T('t', 'main')}/describe`, {}))).body).not.toHaveProperty('table_uri');
    for (const res of [await api().post(`${T('t', 'main')}/describe`, { with_table_uri: true }), await api().post(`${T('t', 'main')}/describe?with_table_uri=true`, {})]) {
      expect(res.body.table_uri).toBe(`file://${location}`);
    }
    expect((await ok(api().post(`${T('t', 'main')}/describe`, { with_table_uri: false }))).body).not.toHaveProperty('table_uri');
  });

  covers(['DescribeTable.check_declared', 'DescribeTable?check_declared'], 'is_only_declared only when asked: true for a declared table, false for one with data', async () => {
    expect((await ok(api().post(`${T('t', 'declared')}/describe`, {}))).body).not.toHaveProperty('is_only_declared');
    for (const via of [(id: string[]) => api().post(`${T(...id)}/describe`, { check_declared: true }), (id: string[]) => api().post(`${T(...id)}/describe?check_declared=true`, {})]) {
      expect((await via(['t', 'declared'])).body.is_only_declared).toBe(true);
      expect((await via(['t', 'main'])).body.is_only_declared).toBe(false);
    }
  });

  covers(['TableExists#200', 'TableExists.version'], 'answers 200 for a table (at a version it has), 404 for a version it lacks (11)', async () => {
    // "conveys the result through the HTTP status code with no response body"
    const exists = await ok(api().post(`${T('t', 'main')}/exists`, {}));
    expect([exists.text, exists.headers.get('content-length')]).toEqual(['', '0']);
    expect((await api().post(`${T('t', 'declared')}/exists`, {})).status).toBe(200);
    for (const version of [1, 2]) expect((await api().post(`${T('t', 'main')}/exists`, { version })).status).toBe(200);
    expectError(await api().post(`${T('t', 'main')}/exists`, { version: 3 }), 404, 11);
  });

  covers(['GetTableStats#200'], "answers the table's rows, fragments and size", async () => {
    const stats = (await ok(api().post(`${T('t', 'main')}/stats`, {}))).body;
    expect(stats).toMatchObject({ num_rows: 5, num_indices: 0, total_bytes: expect.any(Number), fragment_stats: { num_fragments: 2, lengths: { min: 2, max: 3 } } });
  });

  covers(['DeclareTable#200', 'DeclareTable.properties', 'DeclareTable#409'], "declares a table with its properties and a location of its own; a name taken is 409 code 5", async () => {
    const declared = (await ok(api().post(`${T('t', 'd1')}/declare`, { properties: { owner: 'ana' } }))).body;
    expect(declared).toMatchObject({ properties: { owner: 'ana' }, managed_versioning: true, transaction_id: expect.any(String) });
    expect(dirname(declared.location)).toBe(dirname(location));
    expect((await ok(api().post(`${T('t', 'd1')}/describe`, { check_declared: true }))).body).toMatchObject({ location: declared.location, properties: { owner: 'ana' }, is_only_declared: true });
    expectError(await api().post(`${T('t', 'd1')}/declare`, {}), 409, 5);
    expectError(await api().post(`${T('t', 'main')}/declare`, {}), 409, 5);
  });

  covers(['DeclareTable.location'], 'declares the table at the location asked for, which its first write then fills', async () => {
    const wanted = `${dirname(location)}/chosen-place.lance`;
    expect((await ok(api().post(`${T('t', 'placed')}/declare`, { location: wanted }))).body.location).toBe(wanted);
    await ok(api().send('POST', `${T('t', 'placed')}/insert`, arrowStream(rows(0, 2)), ARROW));
    expect(existsSync(`${wanted}/_versions`)).toBe(true);
    expect(await count(api(), ['t', 'placed'])).toBe(2);
  });

  covers(['RegisterTable#200', 'RegisterTable.location', 'RegisterTable.properties'], "registers the table found at the location, with its versions and the properties given", async () => {
    const made = await createTable(api(), ['t', 'elsewhere'], rows(0, 4));
    await ok(api().send('POST', `${T('t', 'elsewhere')}/insert`, arrowStream(rows(4, 1)), ARROW));
    await ok(api().post(`${T('t', 'elsewhere')}/deregister`, {}));
    const registered = await ok(api().post(`${T('u', 'adopted')}/register`, { location: made.location, properties: { source: 'disk' } }));
    expect(registered.body).toMatchObject({ location: made.location, properties: { source: 'disk' }, transaction_id: expect.any(String) });
    expect(await count(api(), ['u', 'adopted'])).toBe(5);
    expect((await ok(api().post(`${T('u', 'adopted')}/version/list`, null))).body.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
    expect((await ok(api().post(`${T('u', 'adopted')}/describe`, {}))).body.properties).toEqual({ source: 'disk' });
  });

  covers(['RegisterTable.mode', 'RegisterTable#409'], 'Create (the default) refuses a name taken (409 code 5); Overwrite replaces the registration', async () => {
    const other = await createTable(api(), ['t', 'other'], rows(0, 7));
    await ok(api().post(`${T('t', 'other')}/deregister`, {}));
    for (const mode of [undefined, 'Create', 'create']) expectError(await api().post(`${T('u', 'adopted')}/register`, { location: other.location, mode }), 409, 5);
    expect(await count(api(), ['u', 'adopted'])).toBe(5);
    const replaced = await ok(api().post(`${T('u', 'adopted')}/register`, { location: other.location, mode: 'overwrite', properties: { v: '2' } }));
    expect(replaced.body).toMatchObject({ location: other.location, properties: { v: '2' } });
    expect(await count(api(), ['u', 'adopted'])).toBe(7);
  });

  covers(['DeregisterTable#200'], 'forgets the table and keeps its files', async () => {
    const made = await createTable(api(), ['t', 'forgotten'], rows(0, 2));
    expect((await ok(api().post(`${T('t', 'forgotten')}/deregister`, {}))).body).toMatchObject({ id: ['t', 'forgotten'], location: made.location, transaction_id: expect.any(String) });
    expectError(await api().post(`${T('t', 'forgotten')}/exists`, {}), 404, 4);
    expect(existsSync(`${made.location}/_versions`)).toBe(true);
  });

  covers(['DropTable#200'], 'drops the table and schedules the purge of its files', async () => {
    const made = await createTable(api(), ['t', 'dropped'], rows(0, 2));
    const dropped = (await ok(api().post(`${T('t', 'dropped')}/drop`, {}))).body;
    expect(dropped).toMatchObject({ id: ['t', 'dropped'], location: made.location, transaction_id: expect.any(String) });
    expectError(await api().post(`${T('t', 'dropped')}/exists`, {}), 404, 4);
    expect((await newestEvents(api(), 5)).filter((e) => e.transaction_id === dropped.transaction_id).map((e) => e.type)).toEqual(['TableDropped', 'TablePurgeScheduled']);
  });

  covers(['RestoreTable#200', 'RestoreTable.version'], "makes the version asked for the content of a new latest version; a version it lacks is 404 code 11", async () => {
    await createTable(api(), ['t', 'restored'], rows(0, 2));
    await ok(api().send('POST', `${T('t', 'restored')}/insert`, arrowStream(rows(2, 3)), ARROW));
    expect(await count(api(), ['t', 'restored'])).toBe(5);
    const restored = (await ok(api().post(`${T('t', 'restored')}/restore`, { version: 1 }))).body;
    expect(restored).toMatchObject({ version: 3, transaction_id: expect.any(String) });
    expect(await count(api(), ['t', 'restored'])).toBe(2);
    expect(await count(api(), ['t', 'restored'], { version: 2 })).toBe(5);
    expectError(await api().post(`${T('t', 'restored')}/restore`, { version: 9 }), 404, 11);
  });

  covers(['RenameTable#200', 'RenameTable.new_table_name', 'RenameTable.new_namespace_id', 'RenameTable#409'], 'renames in place, or into another namespace; a name taken there is 409 code 5', async () => {
    await createTable(api(), ['t', 'before'], rows(0, 3));
    await ok(api().post(`${T('t', 'taken')}/declare`, {}));
    expect((await ok(api().post(`${T('t', 'before')}/rename`, { new_table_name: 'after' }))).body.transaction_id).toEqual(expect.any(String));
    expectError(await api().post(`${T('t', 'before')}/exists`, {}), 404, 4);
    expect(await count(api(), ['t', 'after'])).toBe(3);
    expectError(await api().post(`${T('t', 'after')}/rename`, { new_table_name: 'taken' }), 409, 5);
    await ok(api().post(`${T('t', 'after')}/rename`, { new_table_name: 'moved', new_namespace_id: ['u'] }));
    expect(await count(api(), ['u', 'moved'])).toBe(3);
    expect((await ok(api().get(`${NS('u')}/table/list`))).body.tables).toContain('moved');
    expectError(await api().post(`${T('u', 'moved')}/rename`, { new_table_name: 'x', new_namespace_id: ['nowhere'] }), 404, 1);
  });
});
