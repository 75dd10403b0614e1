/** The fields of the tag operations (see coverage.ts for the tokens). */
import { ARROW, NS, T, arrowStream, count, createTable, expectError, ok, revision, rows, suiteServer } from './fixtures';
import { covers } from './coverage';

describe('tag operations, field by field', () => {
  const s = suiteServer({ entry: 'api' });
  const api = () => s.api;
  const versionOf = async (tag: string) => (await ok(api().post(`${T('g', 't')}/tags/version`, { tag }))).body;

  beforeAll(async () => {
    await ok(api().post(`${NS('g')}/create`, {}));
    // main: version 1 holds 2 rows, version 2 holds 4; branch `dev` starts at 2 and holds 6 at its version 3.
    await createTable(api(), ['g', 't'], rows(0, 2));
    await ok(api().send('POST', `${T('g', 't')}/insert`, arrowStream(rows(2, 2)), ARROW));
    await ok(api().post(`${T('g', 't')}/branches/create`, { name: 'dev' }));
    await ok(api().send('POST', `${T('g', 't')}/insert?branch=dev`, arrowStream(rows(4, 2)), ARROW));
  });

  covers(['CreateTableTag#200', 'CreateTableTag.tag', 'CreateTableTag.version', 'GetTableTagVersion#200', 'GetTableTagVersion.tag'], 'names a version of main by the tag, which GetTableTagVersion and reads at the tag answer', async () => {
    expect((await ok(api().post(`${T('g', 't')}/tags/create`, { tag: 'first', version: 1 }))).body).toEqual({ transaction_id: expect.any(String) });
    expect(await versionOf('first')).toEqual({ version: 1 });
    expect((await ok(api().post(`${T('g', 't')}/describe`, { tag: 'first', load_detailed_metadata: true }))).body.version).toBe(1);
    expectError(await api().post(`${T('g', 't')}/tags/version`, { tag: 'never' }), 404, 8);
    expectError(await api().post(`${T('g', 't')}/tags/create`, { tag: 'late', version: 9 }), 404, 11);
  });

  covers(['CreateTableTag.branch'], 'names a version of the branch given; the tag says which branch', async () => {
    await ok(api().post(`${T('g', 't')}/tags/create`, { tag: 'on_dev', version: 3, branch: 'dev' }));
    expect(await versionOf('on_dev')).toEqual({ version: 3, branch: 'dev' });
    expect((await ok(api().post(`${T('g', 't')}/describe`, { tag: 'on_dev', load_detailed_metadata: true }))).body.version).toBe(3);
    // Main has no version 3.
    expectError(await api().post(`${T('g', 't')}/tags/create`, { tag: 'on_main', version: 3 }), 404, 11);
    expect(await count(api(), ['g', 't'], { branch: 'dev', version: 3 })).toBe(6);
  });

  covers(['CreateTableTag#409'], 'a tag name taken is 409 code 9, and the tag keeps its version', async () => {
    const before = await revision(api());
    expectError(await api().post(`${T('g', 't')}/tags/create`, { tag: 'first', version: 2 }), 409, 9);
    expect(await revision(api())).toBe(before);
    expect(await versionOf('first')).toEqual({ version: 1 });
  });

  covers(['UpdateTableTag#200', 'UpdateTableTag.tag', 'UpdateTableTag.version', 'UpdateTableTag.branch'], 'moves the tag to the version given (on the branch given)', async () => {
    await ok(api().post(`${T('g', 't')}/tags/create`, { tag: 'moving', version: 1 }));
    expect((await ok(api().post(`${T('g', 't')}/tags/update`, { tag: 'moving', version: 2 }))).body).toEqual({ transaction_id: expect.any(String) });
    expect(await versionOf('moving')).toEqual({ version: 2 });
    await ok(api().post(`${T('g', 't')}/tags/update`, { tag: 'moving', version: 3, branch: 'dev' }));
    expect(await versionOf('moving')).toEqual({ version: 3, branch: 'dev' });
    expectError(await api().post(`${T('g', 't')}/tags/update`, { tag: 'never', version: 1 }), 404, 8);
  });

  covers(['DeleteTableTag#200', 'DeleteTableTag.tag'], 'deletes the tag; the version stays', async () => {
    await ok(api().post(`${T('g', 't')}/tags/create`, { tag: 'gone', version: 2 }));
    expect((await ok(api().post(`${T('g', 't')}/tags/delete`, { tag: 'gone' }))).body).toEqual({ transaction_id: expect.any(String) });
    expectError(await api().post(`${T('g', 't')}/tags/version`, { tag: 'gone' }), 404, 8);
    expect(await count(api(), ['g', 't'], { version: 2 })).toBe(4);
    expectError(await api().post(`${T('g', 't')}/tags/delete`, { tag: 'gone' }), 404, 8);
  });

  covers(['ListTableTags#200', 'ListTableTags?limit', 'ListTableTags?page_token'], 'lists the tags with their versions (and branches), limit at a time after page_token', async () => {
    const all = (await ok(api().post(`${T('g', 't')}/tags/list`, null))).body;
    expect(all).toEqual({
      tags: {
        first: expect.objectContaining({ version: 1 }),
        moving: expect.objectContaining({ version: 3, branch: 'dev' }),
        on_dev: expect.objectContaining({ version: 3, branch: 'dev' }),
      },
      page_token: null,
    });
    const first = (await ok(api().post(`${T('g', 't')}/tags/list?limit=2`, null))).body;
    expect([Object.keys(first.tags), first.page_token]).toEqual([['first', 'moving'], 'moving']);
    const rest = (await ok(api().post(`${T('g', 't')}/tags/list?limit=2&page_token=moving`, null))).body;
    expect([Object.keys(rest.tags), rest.page_token]).toEqual([['on_dev'], null]);
  });
});
