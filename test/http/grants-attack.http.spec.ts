/**
 * Principals judged by grants trying to learn of or change what they may not, on one server.
 * `ana`: no level of her own, write on `features` through her role `ml`, read on the table
 * `raw.r1`; `tab`: no level, admin on the table `raw.t` alone; `root` administers everything.
 * Whatever she may not read must answer as a missing object would (status, code, words).
 */
import { createHash } from 'node:crypto';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { Api, Reply } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { root: 'root-key-0123456789', ana: 'ana-key-0123456789', tab: 'tab-key-0123456789' };
const API_KEYS = JSON.stringify([
  { principal: 'root', sha256: sha256(KEYS.root), databases: ['*'], level: 'admin' },
  { principal: 'ana', sha256: sha256(KEYS.ana), databases: ['default'], level: 'none', roles: ['ml'] },
  { principal: 'tab', sha256: sha256(KEYS.tab), databases: ['default'], level: 'none' },
]);
const T = (...id: string[]) => `/v1/table/${Api.id(id)}`;
const NS = (...id: string[]) => `/v1/namespace/${Api.id(id)}`;

/** The same answer but for the name: what a caller learns from a hidden object's is what a missing one's tells. */
function expectSameAnswer(hidden: Reply, missing: Reply, hiddenName: string, missingName: string): void {
  expect([hidden.status, hidden.body.code]).toEqual([missing.status, missing.body.code]);
  expect(hidden.body.error.split(hiddenName).join('#')).toBe(missing.body.error.split(missingName).join('#'));
  expect(Object.keys(hidden.body).sort()).toEqual(Object.keys(missing.body).sort());
}

describe('grants under attack', () => {
  let server: RunningServer;
  let root: Api, ana: Api, tab: Api;

  beforeAll(async () => {
    server = await startServer({ env: { AUTH_API_KEYS: API_KEYS } });
    [root, ana, tab] = [KEYS.root, KEYS.ana, KEYS.tab].map((key) => new Api(server.url, { 'x-api-key': key }));
    for (const ns of [['features'], ['raw'], ['finance']]) expect((await root.post(`${NS(...ns)}/create`, {})).status).toBe(200);
    for (const t of [['features', 'f1'], ['finance', 'ledger']]) {
      expect((await root.send('POST', `${T(...t)}/create`, arrowStream(sampleTable(0, 4)), ARROW_STREAM)).status).toBe(200);
    }
    for (const t of [['raw', 'r1'], ['raw', 'r2'], ['raw', 't']]) expect((await root.post(`${T(...t)}/declare`, {})).status).toBe(200);
    for (const g of [
      { grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' },
      { grantee: { principal: 'ana' }, securable: { table: ['raw', 'r1'] }, level: 'read' },
      { grantee: { principal: 'tab' }, securable: { table: ['raw', 't'] }, level: 'admin' },
    ]) {
      expect((await root.post('/v1/grants/create', g)).status).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('answers every table route on a hidden table, and a hidden namespace, as on a missing one', async () => {
    const routes: Array<[string, unknown]> = [
      ['describe', {}], ['count_rows', {}], ['query', { k: 1, vector: [] }], ['update', { updates: [['id', '1']] }], ['delete', { predicate: 'id = 1' }],
      ['merge_insert', undefined], ['insert', undefined], ['version/list', {}], ['version/describe', { version: 1 }], ['tags/list', {}], ['branches/list', {}],
      ['index/list', {}], ['index/x/stats', {}], ['maintenance/describe', {}], ['maintenance/compact', {}], ['stats', {}], ['rename', { new_table_name: 'z' }],
    ];
    for (const [route, body] of routes) {
      for (const [hiddenId, missingId, hiddenName, missingName] of [
        [['finance', 'ledger'], ['nowhere', 'ledger'], 'finance', 'nowhere'],
        [['raw', 'r2'], ['raw', 'nope'], 'r2', 'nope'],
      ] as const) {
        const send = (api: Api, id: string[]) =>
          body === undefined ? api.send('POST', `${T(...id)}/${route}`, arrowStream(sampleTable(0, 1)), ARROW_STREAM) : api.post(`${T(...id)}/${route}`, body);
        expectSameAnswer(await send(ana, [...hiddenId]), await send(root, [...missingId]), hiddenName, missingName);
      }
    }
    expectSameAnswer(await ana.post(`${NS('finance', 'sub')}/create`, {}), await root.post(`${NS('nowhere', 'sub')}/create`, {}), 'finance', 'nowhere');
    expectSameAnswer(await ana.get(`${NS('finance')}/table/list`), await root.get(`${NS('nowhere')}/table/list`), 'finance', 'nowhere');
    // A page token naming a hidden table or namespace pages on through what she may read.
    expect((await ana.get(`/v1/table?page_token=${encodeURIComponent('finance$ledger')}`)).body.tables).toEqual(['raw$r1']);
    expect((await ana.get(`${NS()}/list?page_token=finance`)).body.namespaces).toEqual(['raw']);
    expect((await ana.get('/admin/queues')).status).toBe(403);
  });

  it('judges UpdateTableSchemaMetadata on its table: a hidden one answers as missing and keeps its metadata', async () => {
    const hidden = await ana.post(`${T('finance', 'ledger')}/schema_metadata/update`, { owner: 'ana' });
    const missing = await root.post(`${T('nowhere', 'ledger')}/schema_metadata/update`, { owner: 'ana' });
    expectSameAnswer(hidden, missing, 'finance', 'nowhere');
    const readOnly = await ana.post(`${T('raw', 'r1')}/schema_metadata/update`, { owner: 'ana' });
    expect([readOnly.status, readOnly.body.code]).toEqual([403, 15]);
    expect((await ana.post(`${T('features', 'f1')}/schema_metadata/update`, { owner: 'ana' })).status).toBe(200);
    const ledger = (await root.get(`/v1/history/table/${Api.id(['finance', 'ledger'])}`)).body.events as any[];
    expect(ledger.filter((e) => e.operation === 'UpdateTableSchemaMetadata')).toEqual([]);
  });

  it('lets a table admin rename only where it may create: a hidden name beside it answers as a free one', async () => {
    const onHidden = await tab.post(`${T('raw', 't')}/rename`, { new_table_name: 'r2' });
    const onFree = await tab.post(`${T('raw', 't')}/rename`, { new_table_name: 'free' });
    expect([onFree.status, onFree.body.code]).toEqual([403, 15]);
    expectSameAnswer(onHidden, onFree, 'r2', 'free');
    expect((await root.post(`${T('raw', 'free')}/exists`, {})).status).toBe(404);
    expect((await tab.post(`${T('raw', 't')}/describe`, {})).status).toBe(200);
  });

  it('lists its own grants and those on what it administers, grants only there, and asks only of itself', async () => {
    const mine = (await ana.get('/v1/grants')).body.grants as any[];
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((g) => g.grantee.principal === 'ana' || g.grantee.role === 'ml')).toBe(true);
    expect((await tab.get('/v1/grants')).body.grants).toEqual([{ grantee: { principal: 'tab' }, securable: { table: ['raw', 't'] }, level: 'admin' }]);
    expect((await tab.get('/v1/grants?at=2000-01-01T00:00:00Z')).body.grants).toEqual([]);
    // Write on features is not admin there; admin on a table is, there alone.
    const above = await ana.post('/v1/grants/create', { grantee: { principal: 'ana' }, securable: { namespace: ['features'] }, level: 'admin' });
    expect([above.status, above.body.code]).toEqual([403, 15]);
    expect((await ana.post('/v1/grants/check', { principal: 'tab', table: ['raw', 't'] })).status).toBe(403);
    expect((await tab.post('/v1/grants/create', { grantee: { principal: 'ana' }, securable: { table: ['raw', 't'] }, level: 'read' })).status).toBe(200);
    expect((await tab.post('/v1/grants/create', { grantee: { principal: 'tab' }, securable: { table: ['raw', 'r2'] }, level: 'admin' })).status).toBe(403);
    expect((await ana.post(`${T('raw', 't')}/describe`, {})).status).toBe(200);
    // Revoking the grant that makes it admin leaves it nothing there.
    expect((await tab.post('/v1/grants/revoke', { grantee: { principal: 'tab' }, securable: { table: ['raw', 't'] }, level: 'admin' })).status).toBe(200);
    expect((await tab.post(`${T('raw', 't')}/describe`, {})).status).toBe(403);
  });

  it("shows in a table's history only what the caller may read of the tables that carried the name", async () => {
    // A table ana may read, renamed into finance afterwards; one renamed from finance onto a name she may read.
    expect((await root.post(`${T('raw', 'gone')}/declare`, {})).status).toBe(200);
    expect((await root.post(`${T('finance', 'secret')}/declare`, {})).status).toBe(200);
    for (const t of [['raw', 'gone'], ['raw', 'came']]) {
      expect((await root.post('/v1/grants/create', { grantee: { principal: 'ana' }, securable: { table: t }, level: 'read' })).status).toBe(200);
    }
    expect((await root.post(`${T('raw', 'gone')}/rename`, { new_table_name: 'moved', new_namespace_id: ['finance'] })).status).toBe(200);
    expect((await root.post(`${T('finance', 'moved')}/drop`, {})).status).toBe(200);
    expect((await root.post(`${T('finance', 'secret')}/rename`, { new_table_name: 'came', new_namespace_id: ['raw'] })).status).toBe(200);
    const gone = await ana.get(`/v1/history/table/${Api.id(['raw', 'gone'])}`);
    expect(gone.body.events.map((e: any) => e.type)).toEqual(['TableDeclared']);
    expect((await root.post(`${T('raw', 'came')}/drop`, {})).status).toBe(200);
    const came = await ana.get(`/v1/history/table/${Api.id(['raw', 'came'])}`);
    expect(came.body.events.map((e: any) => e.type)).toEqual(['TableDropped', 'TablePurgeScheduled']);
    // Locations stay where a table was declared (a known limit, docs/security.md): the rest names nothing hidden.
    const withoutLocations = JSON.stringify([gone.body, came.body], (key, value) => (key === 'location' ? undefined : value));
    expect(withoutLocations).not.toMatch(/finance|secret|moved/);
    // A name she may read that only a hidden table ever carried: as a name never recorded.
    expect((await root.post(`${T('finance', 'q')}/declare`, {})).status).toBe(200);
    expect((await root.post(`${T('finance', 'q')}/rename`, { new_table_name: 'y', new_namespace_id: ['raw'] })).status).toBe(200);
    expect((await root.post(`${T('raw', 'y')}/rename`, { new_table_name: 'q', new_namespace_id: ['finance'] })).status).toBe(200);
    expect((await root.post('/v1/grants/create', { grantee: { principal: 'ana' }, securable: { table: ['raw', 'y'] }, level: 'read' })).status).toBe(200);
    const carried = await ana.get(`/v1/history/table/${Api.id(['raw', 'y'])}`);
    expectSameAnswer(carried, await ana.get(`/v1/history/table/${Api.id(['features', 'none'])}`), 'raw$y', 'features$none');
  });
});
