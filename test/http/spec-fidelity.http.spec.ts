import * as arrow from 'apache-arrow';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

/**
 * Fields and orders the spec states and the catalog once got wrong: a tag resolved by
 * DescribeTable, MergeInsertIntoTable's clauses, timeout and declared tables, a zero-row insert,
 * relative locations, one full-text query at a time, field metadata keyed by path, and one order
 * of checks (the subject before the body) for every operation.
 */
describe('faithful to the spec, field by field', () => {
  let server: RunningServer;
  let api: Api;
  const T = '/v1/table/f%24t';

  beforeAll(async () => {
    server = await startServer();
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/f/create', {})).status).toBe(200);
    expect((await api.send('POST', `${T}/create`, arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
    expect((await api.send('POST', `${T}/insert`, arrowStream(sampleTable(10, 5)), ARROW_STREAM)).status).toBe(200);
  });
  afterAll(() => server?.stop());

  it('DescribeTable resolves `tag` to its version, and refuses it beside `version` or `branch`', async () => {
    expect((await api.post(`${T}/tags/create`, { tag: 'first', version: 1 })).status).toBe(200);
    const tagged = await api.post(`${T}/describe`, { tag: 'first', load_detailed_metadata: true });
    expect(tagged.status).toBe(200);
    expect(tagged.body.version).toBe(1);
    expect((await api.post(`${T}/describe`, { load_detailed_metadata: true })).body.version).toBe(2);
    for (const body of [{ tag: 'first', version: 1 }, { tag: 'first', branch: 'dev' }]) {
      const refused = await api.post(`${T}/describe`, body);
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 13 });
    }
    const missing = await api.post(`${T}/describe`, { tag: 'nope' });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 8 });
  });

  it('UpdateTableTag names a missing version (404 code 11) before a missing tag (404 code 8)', async () => {
    const both = await api.post(`${T}/tags/update`, { tag: 'nope', version: 99 });
    expect({ status: both.status, code: both.body.code }).toEqual({ status: 404, code: 11 });
    const tag = await api.post(`${T}/tags/update`, { tag: 'nope', version: 1 });
    expect({ status: tag.status, code: tag.body.code }).toEqual({ status: 404, code: 8 });
  });

  it('MergeInsertIntoTable: a filter alone asks for its clause, no clause changes nothing, `on` must name columns, `timeout` reads "30s"', async () => {
    const merge = (query: string, rows = sampleTable(0, 3)) => api.send<any>('POST', `${T}/merge_insert?${query}`, arrowStream(rows), ARROW_STREAM);
    const none = await merge('on=id');
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ num_inserted_rows: 0, num_updated_rows: 0, num_deleted_rows: 0, version: 2 });
    // Lance reads the filter over the joined rows: `target.` and `source.` name the two sides.
    const filtered = await merge(`on=id&when_matched_update_all_filt=${encodeURIComponent('target.id < 2')}&timeout=30s`);
    expect(filtered.status).toBe(200);
    expect(filtered.body).toMatchObject({ num_updated_rows: 2, num_inserted_rows: 0 });
    const unknownOn = await merge('on=nope&when_not_matched_insert_all=true');
    expect({ status: unknownOn.status, code: unknownOn.body.code }).toEqual({ status: 404, code: 12 });
    const unknownFilter = await merge(`on=id&when_matched_update_all_filt=${encodeURIComponent('target.ghost > 1')}`);
    expect({ status: unknownFilter.status, code: unknownFilter.body.code }).toEqual({ status: 404, code: 12 });
    for (const timeout of ['5m', '1m30s', '500ms', '2000']) expect((await merge(`on=id&timeout=${timeout}`)).status).toBe(200);
    const badTimeout = await merge('on=id&timeout=soon');
    expect({ status: badTimeout.status, code: badTimeout.body.code }).toEqual({ status: 400, code: 13 });
  });

  it('MergeInsertIntoTable creates a declared table with the rows brought in, as the spec says', async () => {
    expect((await api.post('/v1/table/f%24declared/declare', {})).status).toBe(200);
    const created = await api.send<any>('POST', '/v1/table/f%24declared/merge_insert?on=id&when_not_matched_insert_all=true', arrowStream(sampleTable(0, 4)), ARROW_STREAM);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ num_inserted_rows: 4, num_updated_rows: 0 });
    expect((await api.post('/v1/table/f%24declared/count_rows', {})).body).toBe(4);
  });

  it('InsertIntoTable of no rows answers 0 and commits nothing; an overwrite with none empties the table', async () => {
    const empty = new arrow.Table(sampleTable(0, 1).schema);
    const appended = await api.send<any>('POST', `${T}/insert`, arrowStream(empty), ARROW_STREAM);
    expect(appended.status).toBe(200);
    expect(appended.body.num_inserted_rows).toBe(0);
    const versions = async (table: string) => (await api.post(`/v1/table/${table}/version/list`, {})).body.versions.length;
    const before = await versions('f%24t');
    expect(appended.body.version).toBeGreaterThanOrEqual(2);
    expect(await versions('f%24t')).toBe(before);
    expect((await api.send('POST', '/v1/table/f%24emptied/create', arrowStream(sampleTable(0, 5)), ARROW_STREAM)).status).toBe(200);
    const overwritten = await api.send('POST', '/v1/table/f%24emptied/insert?mode=overwrite', arrowStream(empty), ARROW_STREAM);
    expect(overwritten.status).toBe(200);
    expect((await api.post('/v1/table/f%24emptied/count_rows', {})).body).toBe(0);
  });

  it('RegisterTable and DeclareTable resolve a relative location against the database\'s root, and hold it there', async () => {
    const declared = await api.post('/v1/table/f%24rel/declare', { location: 'f/rel-here.lance' });
    expect(declared.status).toBe(200);
    expect(declared.body.location).toBe(`${server.dataDir}/warehouse/default/f/rel-here.lance`.replace(/\/+/g, '/'));
    const escaping = await api.post('/v1/table/f%24esc/register', { location: '../other/x.lance' });
    expect({ status: escaping.status, code: escaping.body.code }).toEqual({ status: 400, code: 13 });
  });

  it('QueryTable takes one full-text query: string_query or structured_query, not both', async () => {
    const both = await api.post(`${T}/query`, {
      k: 3,
      full_text_query: { string_query: { query: 'apple' }, structured_query: { query: { match: { terms: 'apple', column: 'text' } } } },
    });
    expect({ status: both.status, code: both.body.code }).toEqual({ status: 400, code: 13 });
    expect(both.body.error).toMatch(/string_query or structured_query, not both/);
  });

  it('UpdateFieldMetadata answers `fields` keyed by field path', async () => {
    const answer = await api.post(`${T}/update_field_metadata`, { updates: [{ path: 'text', metadata: { unit: 'words' } }] });
    expect(answer.status).toBe(200);
    expect(answer.body.fields).toEqual({ text: { unit: 'words' } });
  });

  it('names the subject before judging the body: a missing table or namespace is 404 whatever the body, a number out of bounds 400 whatever the table', async () => {
    const cases: Array<[string, unknown, number, number]> = [
      ['/v1/table/f%24missing/query', { k: 1, vector: 'not a vector' }, 404, 4],
      ['/v1/table/nons%24t/query', {}, 404, 1],
      ['/v1/table/f%24missing/update', { updates: [] }, 404, 4],
      ['/v1/table/f%24missing/count_rows', { predicate: 5 }, 404, 4],
      ['/v1/table/f%24missing/restore', { version: -1 }, 400, 13],
      ['/v1/namespace/nons/describe', { properties: 7 }, 404, 1],
      ['/v1/transaction/none/alter', { actions: [] }, 404, 10],
      ['/v1/transaction/a%24b/describe', {}, 404, 10],
      [`${T}/query`, { k: 1, version: 77, vector: 'x' }, 404, 11],
      [`${T}/query`, { k: 1, vector: 'x' }, 400, 13],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await api.post(path, body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status, code });
    }
    const scalar = await api.post('/v1/table/f%24missing/create_scalar_index', { column: 'vector', index_type: 'IVF_PQ' });
    expect({ status: scalar.status, code: scalar.body.code }).toEqual({ status: 400, code: 13 });
  });
});
