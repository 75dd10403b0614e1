/** The fields of the namespace operations and of the table listings (see coverage.ts for the tokens). */
import { NS, T, createTable, expectError, ok, revision, rows, suiteServer } from './fixtures';
import { covers } from './coverage';

describe('namespace operations, field by field', () => {
  const s = suiteServer({ entry: 'api' });
  const api = () => s.api;

  covers(['CreateNamespace#200', 'CreateNamespace.properties', 'DescribeNamespace#200'], 'creates the namespace with its properties, which DescribeNamespace answers', async () => {
    const created = await ok(api().post(`${NS('props')}/create`, { properties: { owner: 'ana', tier: 'gold' } }));
    expect(created.body).toMatchObject({ properties: { owner: 'ana', tier: 'gold' }, transaction_id: expect.any(String) });
    expect((await ok(api().post(`${NS('props')}/describe`, {}))).body).toEqual({ properties: { owner: 'ana', tier: 'gold' } });
    expect((await ok(api().post(`${NS('bare')}/create`, {}))).body.properties).toEqual({});
  });

  covers(['CreateNamespace.mode', 'CreateNamespace#409'], 'Create refuses an existing name (409 code 2), ExistOk keeps it as it is, Overwrite replaces it with a new empty one', async () => {
    await ok(api().post(`${NS('modes')}/create`, { properties: { v: '1' } }));
    await ok(api().post(`${NS('modes', 'child')}/create`, {}));
    await createTable(api(), ['modes', 't'], rows(0, 2));
    for (const mode of [undefined, 'Create', 'create']) expectError(await api().post(`${NS('modes')}/create`, { mode, properties: { v: '2' } }), 409, 2);
    const before = await revision(api());
    for (const mode of ['ExistOk', 'exist_ok']) {
      const kept = await ok(api().post(`${NS('modes')}/create`, { mode, properties: { v: '3' } }));
      expect(kept.body.properties).toEqual({ v: '1' });
      expect(kept.body.transaction_id).toBeUndefined();
    }
    expect(await revision(api())).toBe(before);
    const replaced = await ok(api().post(`${NS('modes')}/create`, { mode: 'overwrite', properties: { v: '4' } }));
    expect(replaced.body.properties).toEqual({ v: '4' });
    expect((await ok(api().post(`${NS('modes')}/describe`, {}))).body.properties).toEqual({ v: '4' });
    expect((await ok(api().get(`${NS('modes')}/list`))).body.namespaces).toEqual([]);
    expect((await ok(api().get(`${NS('modes')}/table/list`))).body.tables).toEqual([]);
    expectError(await api().post(`${NS('modes')}/create`, { mode: 'Sometimes' }), 400, 13);
  });

  covers(['NamespaceExists#200'], 'answers 200 for a namespace that exists, as DescribeNamespace would, without describing it', async () => {
    await ok(api().post(`${NS('here')}/create`, { properties: { a: 'b' } }));
    const res = await ok(api().post(`${NS('here')}/exists`, {}));
    // "conveys the result through the HTTP status code with no response body"
    expect([res.text, res.headers.get('content-length')]).toEqual(['', '0']);
    expectError(await api().post(`${NS('here', 'not')}/exists`, {}), 404, 1);
  });

  covers(['ListNamespaces#200', 'ListNamespaces?limit', 'ListNamespaces?page_token'], 'lists the children, `limit` at a time, each page after the `page_token` of the one before', async () => {
    await ok(api().post(`${NS('parent')}/create`, {}));
    for (const c of ['c1', 'c2', 'c3', 'c4', 'c5']) await ok(api().post(`${NS('parent', c)}/create`, {}));
    await ok(api().post(`${NS('parent', 'c2', 'grandchild')}/create`, {}));
    expect((await ok(api().get(`${NS('parent')}/list`))).body).toEqual({ namespaces: ['c1', 'c2', 'c3', 'c4', 'c5'], page_token: null });
    const first = await ok(api().get(`${NS('parent')}/list?limit=2`));
    expect(first.body).toEqual({ namespaces: ['c1', 'c2'], page_token: 'c2' });
    const second = await ok(api().get(`${NS('parent')}/list?limit=2&page_token=c2`));
    expect(second.body).toEqual({ namespaces: ['c3', 'c4'], page_token: 'c4' });
    expect((await ok(api().get(`${NS('parent')}/list?limit=2&page_token=c4`))).body.namespaces).toEqual(['c5']);
    // The root's children.
    expect((await ok(api().get(`${NS()}/list`))).body.namespaces).toEqual(expect.arrayContaining(['parent', 'props']));
  });

  covers(['DropNamespace#200', 'DropNamespace.mode'], 'drops the namespace; a missing one is 404 code 1 with Fail (the default), and changes nothing with Skip', async () => {
    await ok(api().post(`${NS('doomed')}/create`, {}));
    const dropped = await ok(api().post(`${NS('doomed')}/drop`, {}));
    expect(dropped.body.transaction_id).toEqual([expect.any(String)]);
    expectError(await api().post(`${NS('doomed')}/exists`, {}), 404, 1);
    for (const mode of [undefined, 'Fail', 'fail']) expectError(await api().post(`${NS('doomed')}/drop`, { mode }), 404, 1);
    const before = await revision(api());
    for (const mode of ['Skip', 'skip']) expect((await ok(api().post(`${NS('doomed')}/drop`, { mode }))).body.transaction_id).toBeUndefined();
    expect(await revision(api())).toBe(before);
  });

  covers(['DropNamespace.behavior', 'DropNamespace#409'], 'Restrict (the default) refuses a namespace holding tables or namespaces (409 code 3); Cascade drops them with it', async () => {
    await ok(api().post(`${NS('full')}/create`, {}));
    await ok(api().post(`${NS('full', 'inner')}/create`, {}));
    await createTable(api(), ['full', 'inner', 't'], rows(0, 2));
    await ok(api().post(`${T('full', 'declared')}/declare`, {}));
    for (const behavior of [undefined, 'Restrict', 'restrict']) expectError(await api().post(`${NS('full')}/drop`, { behavior }), 409, 3, /not empty/);
    expect((await ok(api().post(`${T('full', 'inner', 't')}/count_rows`, {}))).body).toBe(2);
    const cascaded = await ok(api().post(`${NS('full')}/drop`, { behavior: 'Cascade' }));
    expect(cascaded.body.transaction_id.length).toBeGreaterThan(0);
    for (const gone of [`${NS('full')}/exists`, `${NS('full', 'inner')}/exists`]) expectError(await api().post(gone, {}), 404, 1);
    expect((await ok(api().get('/v1/table'))).body.tables).not.toEqual(expect.arrayContaining(['full$inner$t']));
  });

  covers(['ListTables#200', 'ListTables?limit', 'ListTables?page_token', 'ListTables?include_declared'], 'lists the tables of one namespace, paged; declared-only tables only with include_declared (true by default)', async () => {
    await ok(api().post(`${NS('tabs')}/create`, {}));
    await ok(api().post(`${NS('tabs', 'sub')}/create`, {}));
    for (const t of ['a', 'c', 'e']) await createTable(api(), ['tabs', t], rows(0, 1));
    for (const t of ['b', 'd']) await ok(api().post(`${T('tabs', t)}/declare`, {}));
    await createTable(api(), ['tabs', 'sub', 'deeper'], rows(0, 1));
    expect((await ok(api().get(`${NS('tabs')}/table/list`))).body).toEqual({ tables: ['a', 'b', 'c', 'd', 'e'], page_token: null });
    expect((await ok(api().get(`${NS('tabs')}/table/list?include_declared=true`))).body.tables).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect((await ok(api().get(`${NS('tabs')}/table/list?include_declared=false`))).body.tables).toEqual(['a', 'c', 'e']);
    expect((await ok(api().get(`${NS('tabs')}/table/list?limit=2`))).body).toEqual({ tables: ['a', 'b'], page_token: 'b' });
    expect((await ok(api().get(`${NS('tabs')}/table/list?limit=2&page_token=b`))).body).toEqual({ tables: ['c', 'd'], page_token: 'd' });
    expect((await ok(api().get(`${NS('tabs')}/table/list?limit=2&page_token=d`))).body.tables).toEqual(['e']);
    expect((await ok(api().get(`${NS('tabs')}/table/list?limit=2&include_declared=false`))).body).toEqual({ tables: ['a', 'c'], page_token: 'c' });
  });

  covers(['ListAllTables#200', 'ListAllTables?limit', 'ListAllTables?page_token', 'ListAllTables?include_declared'], 'lists the tables of every namespace, paged; declared-only ones only with include_declared', async () => {
    const all = (await ok(api().get('/v1/table'))).body;
    expect(all.page_token).toBeNull();
    expect(all.tables).toEqual(expect.arrayContaining(['tabs$a', 'tabs$b', 'tabs$sub$deeper']));
    expect((await ok(api().get('/v1/table?include_declared=false'))).body.tables).toEqual(all.tables.filter((t: string) => t !== 'tabs$b' && t !== 'tabs$d'));
    const pages: string[] = [];
    let token: string | null = null;
    do {
      const page: { tables: string[]; page_token: string | null } = (await ok(api().get(`/v1/table?limit=2${token ? `&page_token=${encodeURIComponent(token)}` : ''}`))).body;
      expect(page.tables.length).toBeLessThanOrEqual(2);
      pages.push(...page.tables);
      token = page.page_token;
    } while (token);
    expect(pages).toEqual(all.tables);
  });
});
