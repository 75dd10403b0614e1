/**
 * Grants on the namespace tree, over HTTP and through the lancedb client, on two API replicas
 * sharing one store. Principals: `ana` (no level of her own, role `ml`), `bob` (no level, role
 * `analyst`), `cleo` (read on the database by her key); `root` administers everything. Grants at
 * every depth: write on the database to cleo, write on `features` to the role ml, admin on
 * `features.v1` to bob, read on the table `raw.r1` to ana, read on `raw` to the role analyst.
 */
import * as lancedb from '@lancedb/lancedb';
import { createHash } from 'node:crypto';
import { Api } from '../support/http';
import { sampleTable } from '../support/arrow-data';
import { RunningServer, startServer, tempDataDir } from '../support/server';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { root: 'root-key-0123456789', ana: 'ana-key-0123456789', bob: 'bob-key-0123456789', cleo: 'cleo-key-0123456789' };
const API_KEYS = JSON.stringify([
  { principal: 'root', sha256: sha256(KEYS.root), databases: ['*'], level: 'admin' },
  { principal: 'ana', sha256: sha256(KEYS.ana), databases: ['default'], level: 'none', roles: ['ml'] },
  { principal: 'bob', sha256: sha256(KEYS.bob), databases: ['default'], level: 'none', roles: ['analyst'] },
  { principal: 'cleo', sha256: sha256(KEYS.cleo), databases: ['default'], level: 'read' },
]);
const T = (...id: string[]) => `/v1/table/${Api.id(id)}`;
const NS = (...id: string[]) => `/v1/namespace/${Api.id(id)}`;

describe('grants on namespaces and tables', () => {
  const dataDir = tempDataDir();
  let a: RunningServer;
  let b: RunningServer;
  const as = (key: string, server = a) => new Api(server.url, { 'x-api-key': key });
  let root: Api, ana: Api, bob: Api, cleo: Api;
  const grant = (api: Api, body: unknown) => api.post('/v1/grants/create', body);

  beforeAll(async () => {
    const env = { AUTH_API_KEYS: API_KEYS };
    [a, b] = await Promise.all([startServer({ dataDir, env }), startServer({ dataDir, env, entry: 'api' })]);
    [root, ana, bob, cleo] = [as(KEYS.root), as(KEYS.ana), as(KEYS.bob), as(KEYS.cleo)];
    for (const ns of [['features'], ['features', 'v1'], ['raw'], ['finance']]) expect((await root.post(`${NS(...ns)}/create`, {})).status).toBe(200);
    for (const t of [['features', 'f1'], ['features', 'v1', 'emb'], ['raw', 'r1'], ['raw', 'r2'], ['finance', 'ledger']]) {
      expect((await root.post(`${T(...t)}/declare`, {})).status).toBe(200);
    }
    const grants = [
      { grantee: { principal: 'cleo' }, securable: { database: true }, level: 'write' },
      { grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' },
      { grantee: { principal: 'bob' }, securable: { namespace: ['features', 'v1'] }, level: 'admin' },
      { grantee: { principal: 'ana' }, securable: { table: ['raw', 'r1'] }, level: 'read' },
      { grantee: { role: 'analyst' }, securable: { namespace: ['raw'] }, level: 'read' },
    ];
    for (const g of grants) {
      const r = await grant(root, g);
      expect(r.status).toBe(200);
      expect(typeof r.body.transaction_id).toBe('string');
    }
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('records grants as events: granting again records nothing, and the grants are listed and in the history', async () => {
    const again = await grant(root, { grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({});
    const listed = await root.get('/v1/grants?limit=3');
    expect(listed.body.grants).toHaveLength(3);
    const rest = await root.get(`/v1/grants?page_token=${encodeURIComponent(listed.body.page_token)}`);
    expect(listed.body.grants.length + rest.body.grants.length).toBe(5);
    expect(rest.body.page_token).toBeNull();
    const reaching = await root.get('/v1/grants?table=features%24v1%24emb');
    expect(reaching.body.grants.map((g: any) => g.level).sort()).toEqual(['admin', 'write', 'write']);
    expect((await root.get('/v1/grants?grantee_role=analyst')).body.grants).toEqual([{ grantee: { role: 'analyst' }, securable: { namespace: ['raw'] }, level: 'read' }]);
    const history = await root.get('/v1/history/database?limit=1000');
    expect(history.body.events.filter((e: any) => e.type === 'GrantIssued')).toHaveLength(5);
    // Bad grants are refused before anything is decided.
    for (const body of [
      { grantee: { principal: 'x' }, securable: { namespace: [] }, level: 'read' },
      { grantee: {}, securable: { database: true }, level: 'read' },
      { grantee: { principal: 'x' }, securable: { database: true }, level: 'owner' },
      // Names no namespace or table can have: one would list as another id (['raw$r1'] as ['raw', 'r1']).
      { grantee: { principal: 'x' }, securable: { namespace: ['raw$r1'] }, level: 'read' },
      { grantee: { principal: 'x' }, securable: { table: ['raw', '..'] }, level: 'read' },
    ]) {
      const r = await grant(root, body);
      expect([r.status, r.body.code]).toEqual([400, 13]);
    }
    expect((await root.get('/v1/grants?grantee_principal=x')).body.grants).toEqual([]);
  });

  it('lets a role with write on a namespace read and write below it, and hides what it may not read as missing', async () => {
    expect((await ana.post(`${T('features', 'f1')}/describe`, {})).status).toBe(200);
    expect((await ana.post(`${T('features', 'v1', 'emb')}/describe`, {})).status).toBe(200);
    expect((await ana.post(`${T('features', 'made_by_ana')}/declare`, {})).status).toBe(200);
    // Admin operations are above write: 403, for she sees the table.
    const drop = await ana.post(`${T('features', 'f1')}/drop`, {});
    expect([drop.status, drop.body.code]).toEqual([403, 15]);
    // A table of a namespace she sees (raw, above her grant) that she may not read: as a missing table.
    const hidden = await ana.post(`${T('raw', 'r2')}/describe`, {});
    const missing = await ana.post(`${T('raw', 'nope')}/describe`, {});
    expect([hidden.status, hidden.body.code, missing.status, missing.body.code]).toEqual([404, 4, 404, 4]);
    expect(hidden.body.error).toBe(missing.body.error.replace('nope', 'r2'));
    expect(Object.keys(hidden.body).sort()).toEqual(Object.keys(missing.body).sort());
    // A namespace she may not see: as a missing namespace, for its tables too, whatever the body.
    for (const [path, body] of [
      [`${T('finance', 'ledger')}/describe`, {}],
      [`${T('finance', 'ledger')}/describe`, { version: 'not a number' }],
      [`${NS('finance')}/describe`, {}],
      [`${NS('finance')}/table/list`, undefined],
      [`${T('finance', 'new')}/declare`, {}],
    ] as const) {
      const r = body === undefined ? await ana.get(path) : await ana.post(path, body);
      const m = body === undefined ? await root.get(path.replace('finance', 'nowhere')) : await root.post(path.replace('finance', 'nowhere'), body);
      expect([r.status, r.body.code]).toEqual([m.status, m.body.code]);
      expect(r.body.error).toBe(m.body.error.replace('nowhere', 'finance'));
    }
    // She sees raw (to reach r1) but may not describe it or write in it.
    expect((await ana.post(`${NS('raw')}/exists`, {})).status).toBe(200);
    expect((await ana.post(`${NS('raw')}/describe`, {})).status).toBe(403);
    expect((await ana.post(`${T('raw', 'r9')}/declare`, {})).status).toBe(403);
    expect((await ana.post(`${NS('features')}/describe`, {})).status).toBe(200);
    expect((await ana.post(`${T('raw', 'r1')}/deregister`, {})).status).toBe(403);
  });

  it('lists only what the caller may read, and the namespaces above its grants', async () => {
    expect((await ana.get(`${NS()}/list`)).body.namespaces).toEqual(['features', 'raw']);
    expect((await ana.get(`${NS('raw')}/table/list`)).body.tables).toEqual(['r1']);
    expect((await ana.get(`${NS('features')}/table/list`)).body.tables).toEqual(['f1', 'made_by_ana']);
    expect((await ana.get('/v1/table')).body.tables).toEqual(['features$f1', 'features$made_by_ana', 'features$v1$emb', 'raw$r1']);
    expect((await bob.get(`${NS()}/list`)).body.namespaces).toEqual(['features', 'raw']);
    expect((await bob.get(`${NS('features')}/list`)).body.namespaces).toEqual(['v1']);
    expect((await bob.get(`${NS('features')}/table/list`)).body.tables).toEqual([]);
    expect((await bob.get('/v1/table')).body.tables).toEqual(['features$v1$emb', 'raw$r1', 'raw$r2']);
    // Cleo's key reads the database: she lists everything.
    expect((await cleo.get(`${NS()}/list`)).body.namespaces).toEqual(['features', 'finance', 'raw']);
    // With paging, the pages hold only visible names too.
    const first = await ana.get(`${NS()}/list?limit=1`);
    expect(first.body.namespaces).toEqual(['features']);
    expect((await ana.get(`${NS()}/list?limit=1&page_token=${first.body.page_token}`)).body.namespaces).toEqual(['raw']);
  });

  it('judges each operation of a batch on its own table, and a grant at every depth', async () => {
    // A declaration in finance (hidden from ana) fails the whole batch as a missing namespace would.
    const hidden = await ana.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['features', 'b1'] } }, { declare_table: { id: ['finance', 'b2'] } }] });
    expect([hidden.status, hidden.body.code]).toEqual([404, 1]);
    const refused = await ana.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['features', 'b1'] } }, { deregister_table: { id: ['features', 'f1'] } }] });
    expect([refused.status, refused.body.code]).toEqual([403, 15]);
    expect((await root.post(`${T('features', 'b1')}/exists`, {})).status).toBe(404);
    expect((await ana.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['features', 'b1'] } }] })).status).toBe(200);
    // Bob's admin on features.v1 (depth 2): he drops there, grants there, and nowhere above.
    expect((await bob.post(`${T('features', 'v1', 'tmp')}/declare`, {})).status).toBe(200);
    expect((await bob.post(`${T('features', 'v1', 'tmp')}/drop`, {})).status).toBe(200);
    expect((await grant(bob, { grantee: { principal: 'cleo' }, securable: { namespace: ['features', 'v1'] }, level: 'admin' })).status).toBe(200);
    const above = await grant(bob, { grantee: { principal: 'bob' }, securable: { namespace: ['features'] }, level: 'admin' });
    expect([above.status, above.body.code]).toEqual([403, 15]);
    expect((await bob.post(`${T('features', 'f1')}/describe`, {})).status).toBe(404);
    // Cleo's database grant (write) over her key's read: she declares in finance, may not drop there.
    expect((await cleo.post(`${T('finance', 'c1')}/declare`, {})).status).toBe(200);
    expect((await cleo.post(`${T('finance', 'c1')}/drop`, {})).status).toBe(403);
    // Her level on each table decides the rights that follow it: an expiry policy needs admin there.
    const policy = { properties: { 'maintenance.expire.keep_last': '5' } };
    expect((await cleo.post(`${T('finance', 'c2')}/declare`, policy)).status).toBe(403);
    expect((await cleo.post(`${T('features', 'v1', 'c2')}/declare`, policy)).status).toBe(200);
    // The role analyst's read on raw: bob reads r2, cannot write it.
    expect((await bob.post(`${T('raw', 'r2')}/describe`, {})).status).toBe(200);
    expect((await bob.post(`${T('raw', 'r2')}/declare`, {})).status).toBe(403);
  });

  it('shows each caller only the events, transactions and history of what it may read', async () => {
    const events = (await ana.get('/v1/history/database?limit=1000')).body.events as any[];
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain('finance');
    expect(JSON.stringify(events)).not.toContain('r2');
    expect(events.some((e) => e.data.table?.join('.') === 'features.f1')).toBe(true);
    const all = (await root.get('/v1/history/database?limit=1000')).body.events as any[];
    const financeTx = all.find((e) => e.type === 'TableDeclared' && e.data.table[0] === 'finance').transaction_id;
    const featuresTx = all.find((e) => e.type === 'TableDeclared' && e.data.table.join('.') === 'features.f1').transaction_id;
    const hiddenTx = await ana.post(`/v1/transaction/${financeTx}/describe`, {});
    const missingTx = await ana.post('/v1/transaction/00000000-0000-4000-8000-000000000000/describe', {});
    expect([hiddenTx.status, hiddenTx.body.code, missingTx.status, missingTx.body.code]).toEqual([404, 10, 404, 10]);
    expect((await ana.post(`/v1/transaction/${featuresTx}/describe`, {})).status).toBe(200);
    expect((await ana.get(`/v1/history/transaction/${financeTx}`)).status).toBe(404);
    expect((await ana.get(`/v1/history/table/${Api.id(['finance', 'ledger'])}`)).status).toBe(404);
    const rawHistory = (await ana.get(`/v1/history/namespace/raw`)).body.events as any[];
    expect(rawHistory.map((e) => e.data.table?.join('.'))).toEqual(['raw.r1']);
    // The live feed too: a finance event made now never reaches her.
    const controller = new AbortController();
    const feed = await fetch(`${a.url}/v1/history/live`, { headers: { 'x-api-key': KEYS.ana }, signal: controller.signal });
    expect(feed.status).toBe(200);
    await root.post(`${T('finance', 'live')}/declare`, {});
    await root.post(`${T('features', 'live')}/declare`, {});
    const reader = feed.body!.getReader();
    let text = '';
    while (!text.includes('features')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).not.toContain('finance');
  });

  it('answers a level with what gives it, now and as of a time before a revoke, and a revoke counts on the other replica at once', async () => {
    const annB = as(KEYS.ana, b);
    expect((await annB.post(`${T('features', 'f1')}/describe`, {})).status).toBe(200);
    const check = await root.post('/v1/grants/check', { principal: 'ana', roles: ['ml'], table: ['features', 'f1'] });
    expect(check.body).toEqual({ level: 'write', because: [{ grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' }] });
    const cleoCheck = await root.post('/v1/grants/check', { principal: 'cleo', roles: [], namespace: ['finance'] });
    expect(cleoCheck.body).toEqual({ level: 'write', because: [{ key: 'read' }, { grantee: { principal: 'cleo' }, securable: { database: true }, level: 'write' }] });
    // Others may ask only of themselves.
    expect((await ana.post('/v1/grants/check', { principal: 'bob', table: ['features', 'f1'] })).status).toBe(403);
    expect((await ana.post('/v1/grants/check', { principal: 'ana', table: ['raw', 'r1'] })).body.level).toBe('read');

    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const revoked = await root.post('/v1/grants/revoke', { grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' });
    expect(typeof revoked.body.transaction_id).toBe('string');
    // The very next request on the other replica answers as for a missing namespace: she has nothing left in features.
    const after = await annB.post(`${T('features', 'f1')}/describe`, {});
    expect([after.status, after.body.code, after.body.error]).toEqual([404, 1, "namespace 'features' does not exist"]);
    expect((await as(KEYS.ana, b).get(`${NS()}/list`)).body.namespaces).toEqual(['raw']);
    const now = await as(KEYS.root, b).post('/v1/grants/check', { principal: 'ana', roles: ['ml'], table: ['features', 'f1'] });
    expect(now.body).toEqual({ level: 'none', because: [] });
    const past = await as(KEYS.root, b).post('/v1/grants/check', { principal: 'ana', roles: ['ml'], table: ['features', 'f1'], at: before });
    expect([past.body.level, past.body.because]).toEqual(['write', [{ grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' }]]);
    const history = (await root.get('/v1/history/database?limit=1000')).body.events as any[];
    expect(history.filter((e) => e.type === 'GrantRevoked').map((e) => [e.principal, e.data.grantee])).toEqual([['root', { role: 'ml' }]]);
    // Both replicas fold the same grants.
    const [da, db] = await Promise.all([root.get('/v1/history/digest'), as(KEYS.root, b).get('/v1/history/digest')]);
    expect(da.body.digest).toBe(db.body.digest);
    // Put it back for the client's case.
    await grant(root, { grantee: { role: 'ml' }, securable: { namespace: ['raw'] }, level: 'read' });
  });

  it('lets the lancedb client of a principal with read on a namespace open and search its tables, and nothing more', async () => {
    await root.post(`${T('raw', 'r1')}/drop`, {});
    const owner = await lancedb.connectNamespace('rest', { uri: a.url, headers: { 'x-api-key': KEYS.root } });
    await owner.createTable('vectors', sampleTable(0, 40), ['raw']);
    const db = await lancedb.connectNamespace('rest', { uri: b.url, headers: { 'x-api-key': KEYS.ana } });
    const table = await db.openTable('vectors', ['raw']);
    expect(await table.countRows()).toBe(40);
    const hits = await table.vectorSearch(Array.from({ length: 8 }, (_, i) => Math.sin(3 * (1 + i)))).limit(3).toArray();
    expect(hits[0].id).toBe(3);
    // Its commit (version/create) is refused with 403, which the client reports as a commit it cannot confirm.
    await expect(table.add(sampleTable(40, 5))).rejects.toThrow(/commit/i);
    expect((await ana.post(`${T('raw', 'vectors')}/version/create`, { version: 2, manifest_path: 'x' })).status).toBe(403);
    expect(await (await owner.openTable('vectors', ['raw'])).countRows()).toBe(40);
    expect((await db.listNamespaces([])).namespaces).toEqual(['raw']);
    expect(await db.tableNames(['raw'])).toEqual(['r2', 'vectors']);
    await expect(db.tableNames(['finance'])).rejects.toThrow(/404|not exist|not found/i);
  }, 60_000);

  it("judges a key by grants only in the databases it lists: another database's admin cannot reach it there", async () => {
    const other = root.withHeaders({ 'x-lance-database': 'other' });
    expect((await other.post(`${NS('priv')}/create`, {})).status).toBe(200);
    expect((await grant(other, { grantee: { principal: 'ana' }, securable: { database: true }, level: 'read' })).status).toBe(200);
    expect((await grant(other, { grantee: { role: 'ml' }, securable: { database: true }, level: 'write' })).status).toBe(200);
    const anaThere = ana.withHeaders({ 'x-lance-database': 'other' });
    expect((await anaThere.get(`${NS('$')}/list`)).status).toBe(403);
    expect((await anaThere.post(`${NS('priv')}/describe`, {})).status).toBe(403);
    // In her own database her grants still count.
    const own = { grantee: { principal: 'ana' }, securable: { namespace: ['finance'] }, level: 'read' };
    expect((await grant(root, own)).status).toBe(200);
    expect((await ana.post(`${NS('finance')}/describe`, {})).status).toBe(200);
    expect((await root.post('/v1/grants/revoke', own)).status).toBe(200);
  });

  it('keeps webhook subscriptions to admins of the database, and refuses to create them where no WEBHOOK_SECRET_KEY is set', async () => {
    const body = { url: 'https://hooks.example.com/in' };
    // bob administers features.v1, cleo may write the database: neither administers the database.
    for (const caller of [bob, cleo]) {
      expect((await caller.post('/v1/subscriptions/create', body)).status).toBe(403);
      expect((await caller.post('/v1/subscriptions/list', {})).status).toBe(403);
    }
    const refused = await root.post('/v1/subscriptions/create', body);
    expect(refused.status).toBe(406);
    expect(refused.body.error).toMatch(/WEBHOOK_SECRET_KEY/);
    expect((await root.post('/v1/subscriptions/list', {})).body).toEqual({ subscriptions: [], page_token: null });
  });
});
