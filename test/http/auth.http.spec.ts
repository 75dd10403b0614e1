import * as lancedb from '@lancedb/lancedb';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const SECRET = 'a-shared-secret-of-at-least-thirty-two-characters';
const KEYS = {
  reader: 'reader-key-0123456789',
  writer: 'writer-key-0123456789',
  admin: 'admin-key-0123456789',
  sales: 'sales-key-0123456789',
};
const API_KEYS = JSON.stringify([
  { principal: 'reader', sha256: sha256(KEYS.reader), databases: ['default'], level: 'read' },
  { principal: 'writer', sha256: sha256(KEYS.writer), databases: ['default'], level: 'write' },
  { principal: 'root', sha256: sha256(KEYS.admin), databases: ['*'], level: 'admin' },
  { principal: 'sales-admin', sha256: sha256(KEYS.sales), databases: ['sales'], level: 'admin' },
]);

function token(claims: Record<string, unknown>, opts: { exp?: string | number; nbf?: string | number; iss?: string; aud?: string; secret?: string } = {}) {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(String(claims.sub ?? 'alice'))
    .setIssuer(opts.iss ?? 'https://issuer.test')
    .setAudience(opts.aud ?? 'lance-catalog')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '5m');
  if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf);
  return jwt.sign(new TextEncoder().encode(opts.secret ?? SECRET));
}

describe('authentication and authorization', () => {
  let server: RunningServer;
  let anon: Api;
  const as = (key: string) => new Api(server.url, { 'x-api-key': key });

  beforeAll(async () => {
    server = await startServer({
      env: {
        AUTH_API_KEYS: API_KEYS,
        AUTH_JWT_SECRET: SECRET,
        AUTH_JWT_ISSUER: 'https://issuer.test',
        AUTH_JWT_AUDIENCE: 'lance-catalog',
      },
    });
    anon = new Api(server.url);
    expect((await as(KEYS.admin).post('/v1/namespace/shop/create', {})).status).toBe(200);
  });
  afterAll(() => server?.stop());

  const namespaces = async () => (await as(KEYS.admin).get('/v1/namespace/%24/list')).body.namespaces;

  it('answers 401 code 16 without credentials or with unknown ones, and changes nothing', async () => {
    const before = await namespaces();
    const attempts: Record<string, string>[] = [{}, { 'x-api-key': 'not-a-key' }, { authorization: 'Bearer not-a-key' }, { authorization: 'Token abc' }];
    for (const headers of attempts) {
      const res = await anon.post('/v1/namespace/intruder/create', {}, headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 16 });
      expect(res.body.error).toEqual(expect.any(String));
    }
    expect(await namespaces()).toEqual(before);
  });

  it('needs no credentials for health, readiness and the API description', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json']) expect((await anon.get(path)).status).toBe(200);
  });

  it('answers metrics to a credential with any level on any database, naming no database', async () => {
    const none = await anon.get('/metrics');
    expect({ status: none.status, code: none.body.code }).toEqual({ status: 401, code: 16 });
    expect((await anon.get('/metrics', { 'x-api-key': 'not-a-key' })).status).toBe(401);
    // A token that grants nothing on any database.
    const nothing = await anon.get('/metrics', { authorization: `Bearer ${await token({ scope: 'openid' })}` });
    expect({ status: nothing.status, code: nothing.body.code }).toEqual({ status: 403, code: 15 });
    // Another database's projection is served too, and still not named.
    expect((await as(KEYS.sales).get('/v1/namespace/%24/list', { 'x-lance-database': 'sales' })).status).toBe(200);
    for (const key of [KEYS.reader, KEYS.sales, KEYS.admin]) {
      const scraped = await as(key).get('/metrics');
      expect(scraped.status).toBe(200);
      expect(scraped.text).toMatch(/^lance_catalog_projection_lag_events \d+$/m);
      expect(scraped.text).not.toMatch(/database=/);
    }
  });

  it('answers 403 code 15 to a read-only key that writes, and to a key of another database', async () => {
    expect((await as(KEYS.reader).get('/v1/namespace/%24/list')).status).toBe(200);
    const write = await as(KEYS.reader).post('/v1/table/shop$t1/declare', {});
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ code: 15 });
    expect(write.body.error).toMatch(/reader may not write database 'default'/);
    const otherDb = await as(KEYS.reader).get('/v1/namespace/%24/list', { 'x-lance-database': 'sales' });
    expect(otherDb.status).toBe(403);
    const salesAdmin = await as(KEYS.sales).post('/v1/namespace/crm/create', {}, { 'x-lance-database': 'sales' });
    expect(salesAdmin.status).toBe(200);
    expect((await as(KEYS.sales).get('/v1/namespace/%24/list')).status).toBe(403);
    expect((await as(KEYS.admin).post('/v1/table/shop$t1/exists', {})).status).toBe(404);
  });

  it('lets a write key write data but not administer', async () => {
    const writer = as(KEYS.writer);
    const created = await writer.send('POST', '/v1/table/shop$orders/create', arrowStream(sampleTable(0, 20)), ARROW_STREAM);
    expect(created.status).toBe(200);
    const inserted = await writer.send('POST', '/v1/table/shop$orders/insert', arrowStream(sampleTable(20, 5)), ARROW_STREAM);
    expect(inserted.status).toBe(200);
    expect((await writer.post('/v1/table/shop$orders/count_rows', {})).body).toBe(25);
    const drop = await writer.post('/v1/table/shop$orders/drop', {});
    expect(drop.status).toBe(403);
    expect((await writer.post('/v1/table/shop$orders/exists', {})).status).toBe(200);
    // The audit trail names who did it.
    const history = await as(KEYS.admin).get('/v1/history/table/shop$orders');
    expect(history.body.events.some((e: { principal?: string }) => e.principal === 'writer')).toBe(true);
  });

  it("confines every location a principal names to its own database: another database's tables and folders are refused alike", async () => {
    // `sales-admin` administers `sales` only; the writer's table of `default` holds 25 rows.
    const victim = (await as(KEYS.admin).post('/v1/table/shop$orders/describe', {})).body.location as string;
    const root = victim.slice(0, victim.indexOf('/default/'));
    const sales = as(KEYS.sales).withHeaders({ 'x-lance-database': 'sales' });
    expect((await sales.post('/v1/namespace/loot/create', {})).status).toBe(200);
    const attempts = [victim, `file://${victim}`, `${root}/default`, `${root}/default/shop`, `${root}/default/shop/new.lance`, `${root}/sales/../default/shop/orders.lance`, `${root}/nowhere/t.lance`];
    const answers: string[] = [];
    for (const location of attempts) {
      const refusals = [
        await sales.post('/v1/table/loot$stolen/register', { location }),
        await sales.post('/v1/table/loot$stolen/declare', { location }),
        await sales.send('POST', '/v1/table/loot$stolen/create', arrowStream(sampleTable(0, 2)), { ...ARROW_STREAM, 'x-lance-table-location': location }),
        await sales.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['loot', 'stolen'], location } }] }),
      ];
      for (const r of refusals) {
        expect({ location, status: r.status, code: (r.body as { code: number }).code }).toEqual({ location, status: 400, code: 13 });
        // The answer names the caller's input and its own root only: the same for a table that exists and for nothing.
        answers.push((r.body as { error: string }).error.split(location).join('<location>'));
        const beyondInput = r.text.split(JSON.stringify(location).slice(1, -1)).join('');
        expect(beyondInput).not.toMatch(/orders|default|shop|writer/);
      }
    }
    // One answer for every route and every location, whatever lies there.
    expect(new Set(answers)).toEqual(new Set([`location '<location>' is not inside this database's root '$WAREHOUSE/sales' in the warehouse`]));
    // Escapes Lance would decode into another table's folder, or out of the database, are refused as such.
    for (const location of [`${root}/sales/%2e%2e/default/shop/x.lance`, `${root}/sales/loot%2Fx.lance`, `file://${root}/sales/loot/a%2e.lance`]) {
      for (const r of [
        await sales.post('/v1/table/loot$escaped/declare', { location }),
        await sales.send('POST', '/v1/table/loot$escaped/create', arrowStream(sampleTable(0, 2)), { ...ARROW_STREAM, 'x-lance-table-location': location }),
        await sales.post('/v1/table/loot$escaped/register', { location }),
      ]) {
        expect({ location, status: r.status, code: (r.body as { code: number }).code }).toEqual({ location, status: 400, code: 13 });
        expect((r.body as { error: string }).error).toContain("holds '%'");
      }
    }
    // A fragment Lance would drop (`...#x` opens what comes before it) is refused the same way.
    const fragment = await sales.post('/v1/table/loot$escaped/declare', { location: `${root}/sales/loot/f.lance#x` });
    expect([fragment.status, fragment.body.code, fragment.body.error.includes("holds '#'")]).toEqual([400, 13, true]);
    expect((await sales.post('/v1/table/loot$escaped/exists', {})).status).toBe(404);
    // A symlink inside one's own root that leads into another database's is followed and refused.
    mkdirSync(`${root}/sales/loot`, { recursive: true });
    symlinkSync(victim, `${root}/sales/loot/link.lance`);
    const linked = await sales.post('/v1/table/loot$stolen/register', { location: `${root}/sales/loot/link.lance` });
    expect({ status: linked.status, code: linked.body.code }).toEqual({ status: 400, code: 13 });
    expect(linked.body.error).toContain('through a symlink');
    expect((await sales.post('/v1/table/loot$stolen/count_rows', {})).status).toBe(404);
    expect((await sales.get('/v1/table')).body.tables).toEqual([]);
    // Inside its own root, a location holding a character storage policies read as a pattern is refused on every path.
    for (const location of [`${root}/sales/loot/*`, `${root}/sales/loot/t?`, `${root}/sales/\${x}`, `file://${root}/sales/loot/[a]`]) {
      for (const r of [
        await sales.post('/v1/table/loot$stolen/register', { location }),
        await sales.post('/v1/table/loot$stolen/declare', { location }),
        await sales.send('POST', '/v1/table/loot$stolen/create', arrowStream(sampleTable(0, 2)), { ...ARROW_STREAM, 'x-lance-table-location': location }),
        await sales.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['loot', 'stolen'], location } }] }),
      ]) {
        expect({ location, status: r.status, code: r.body.code }).toEqual({ location, status: 400, code: 13 });
        expect(r.body.error).toMatch(/which storage policies read as a pattern; name a location without any of/);
      }
    }
    // Inside its own root the same principal registers freely.
    const own = await sales.post('/v1/table/loot$mine/declare', {});
    expect(own.body.location.startsWith(`${root}/sales/`)).toBe(true);
  });

  it("checks each operation of a batch against its own route's level: a write key cannot delete versions or deregister through one", async () => {
    const [reader, writer, admin] = [as(KEYS.reader), as(KEYS.writer), as(KEYS.admin)];
    expect((await admin.send('POST', '/v1/table/shop$ledger/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
    expect((await writer.send('POST', '/v1/table/shop$ledger/insert', arrowStream(sampleTable(10, 10)), ARROW_STREAM)).status).toBe(200);
    const versions = async () => ((await reader.post('/v1/table/shop$ledger/version/list', {})).body.versions as { version: number }[]).map((v) => v.version);
    const before = await versions();
    expect(before.length).toBe(2);
    const deleteAll = { delete_table_versions: { id: ['shop', 'ledger'], ranges: [{ start_version: 0, end_version: -1 }] } };
    const deregister = { deregister_table: { id: ['shop', 'ledger'] } };
    for (const operations of [[deleteAll], [deregister], [{ declare_table: { id: ['shop', 'sneaky'] } }, deleteAll]]) {
      const refused = await writer.post('/v1/table/batch-commit', { operations });
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 15 });
      expect(refused.body.error).toMatch(/^writer may not administer database 'default', which operations\[\d\] \((delete_table_versions|deregister_table)\) needs$/);
    }
    // Nothing of any refused batch was applied.
    expect(await versions()).toEqual(before);
    expect((await reader.post('/v1/table/shop$ledger/count_rows', {})).body).toBe(20);
    expect((await reader.post('/v1/table/shop$sneaky/exists', {})).status).toBe(404);
    // A read key may not run a batch at all.
    const read = await reader.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['shop', 'r'] } }] });
    expect({ status: read.status, code: read.body.code }).toEqual({ status: 403, code: 15 });

    // A write key's batch of declarations and version commits passes, as do its version batches.
    const location = `${(await reader.post('/v1/table/shop$ledger/describe', {})).body.location.replace(/\/[^/]+$/, '')}/batched.lance`;
    const stage = (version: number) => {
      mkdirSync(`${location}/_versions`, { recursive: true });
      const path = `${location}/_versions/${version}.manifest-${randomUUID()}`;
      writeFileSync(path, `manifest ${version}`);
      return path;
    };
    const written = await writer.post('/v1/table/batch-commit', {
      operations: [{ declare_table: { id: ['shop', 'batched'], location } }, { create_table_version: { id: ['shop', 'batched'], version: 1, manifest_path: stage(1) } }],
    });
    expect(written.status).toBe(200);
    const versionBatch = await writer.post('/v1/table/version/batch-create', { entries: [{ id: ['shop', 'batched'], version: 2, manifest_path: stage(2) }] });
    expect(versionBatch.status).toBe(200);
    expect((await reader.post('/v1/table/version/batch-create', { entries: [{ id: ['shop', 'batched'], version: 3, manifest_path: stage(3) }] })).status).toBe(403);

    // An admin's batch may do all of it.
    const administered = await admin.post('/v1/table/batch-commit', {
      operations: [{ delete_table_versions: { id: ['shop', 'ledger'], ranges: [{ start_version: before[0], end_version: before[0] + 1 }] } }, { deregister_table: { id: ['shop', 'batched'] } }],
    });
    expect(administered.status).toBe(200);
    expect(await versions()).toEqual(before.slice(1));
    expect((await reader.post('/v1/table/shop$batched/exists', {})).status).toBe(404);
  });

  it("honours the body's identity when no header is sent, and lets headers win over it", async () => {
    const viaBody = await anon.post('/v1/table/shop$t2/declare', { identity: { api_key: KEYS.writer } });
    expect(viaBody.status).toBe(200);
    const headerWins = await anon.post('/v1/table/shop$t3/declare', { identity: { api_key: KEYS.admin } }, { 'x-api-key': KEYS.reader });
    expect(headerWins.status).toBe(403);
    const tokenInBody = await anon.post('/v1/table/shop$t4/declare', { identity: { auth_token: await token({ scope: 'lance:write:default' }) } });
    expect(tokenInBody.status).toBe(200);
    // A JSON body sent without a content type is read as JSON, its identity too.
    const untyped = await anon.send('POST', '/v1/table/shop$t5/declare', Buffer.from(JSON.stringify({ identity: { api_key: KEYS.writer } })), {});
    expect(untyped.status).toBe(200);
    expect((await as(KEYS.admin).post('/v1/table/shop$t3/exists', {})).status).toBe(404);
  });

  it('verifies JWT signature, exp, nbf, issuer and audience, and maps scopes to levels', async () => {
    const bearer = async (t: Promise<string> | string) => ({ authorization: `Bearer ${await t}` });
    const ok = await anon.post('/v1/namespace/jwt1/create', {}, await bearer(token({ scope: 'lance:admin' })));
    expect(ok.status).toBe(200);
    const refusals: [string, Promise<string>, RegExp][] = [
      ['expired', token({ scope: 'lance:admin' }, { exp: Math.floor(Date.now() / 1000) - 60 }), /expired/],
      ['not yet valid', token({ scope: 'lance:admin' }, { nbf: '10m' }), /nbf/],
      ['wrong issuer', token({ scope: 'lance:admin' }, { iss: 'https://evil.test' }), /iss/],
      ['wrong audience', token({ scope: 'lance:admin' }, { aud: 'someone-else' }), /aud/],
      ['bad signature', token({ scope: 'lance:admin' }, { secret: 'another-secret-of-at-least-thirty-two-chars' }), /signature/],
    ];
    for (const [why, t, message] of refusals) {
      const res = await anon.post('/v1/namespace/jwt-bad/create', {}, await bearer(t));
      expect({ why, status: res.status, code: res.body.code }).toEqual({ why, status: 401, code: 16 });
      expect(res.body.error).toMatch(message);
    }
    const readOnly = await anon.post('/v1/namespace/jwt2/create', {}, await bearer(token({ scope: 'openid lance:read' })));
    expect(readOnly.status).toBe(403);
    const salesOnly = await bearer(token({ scp: ['lance:write:sales'] }));
    expect((await anon.post('/v1/table/crm$t/declare', {}, { ...salesOnly, 'x-lance-database': 'sales' })).status).toBe(200);
    expect((await anon.post('/v1/table/shop$t9/declare', {}, salesOnly)).status).toBe(403);
    expect((await as(KEYS.admin).post('/v1/namespace/jwt-bad/exists', {})).status).toBe(404);
  });

  it('serves the real lancedb client that sends its key as a configured header', async () => {
    const db = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.writer } });
    const table = await db.createTable('client_made', sampleTable(0, 10), ['shop']);
    await table.add(sampleTable(10, 5));
    expect(await table.countRows()).toBe(15);
    const readOnly = await lancedb.connectNamespace('rest', { uri: server.url, headers: { 'x-api-key': KEYS.reader } });
    await expect(readOnly.createTable('refused', sampleTable(0, 1), ['shop'])).rejects.toThrow(/denied|403|15/i);
    expect(await (await readOnly.openTable('client_made', ['shop'])).countRows()).toBe(15);
  });

  it('asks for admin credentials on the queue dashboard', async () => {
    const none = await anon.get('/admin/queues');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await anon.get('/admin/queues', { authorization: `Basic ${Buffer.from(`x:${KEYS.writer}`).toString('base64')}` })).status).toBe(403);
    expect((await anon.get('/admin/queues', { authorization: `Basic ${Buffer.from(`x:${KEYS.sales}`).toString('base64')}` })).status).toBe(403);
    const admin = await anon.get('/admin/queues', { authorization: `Basic ${Buffer.from(`ops:${KEYS.admin}`).toString('base64')}` });
    expect(admin.status).toBe(200);
    expect(admin.text).toMatch(/<html/i);
  });
});

describe('JWT keys from a JWKS URL', () => {
  let jwks: Server;
  let server: RunningServer;
  let sign: (scope: string, kid?: string) => Promise<string>;

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    sign = (scope, kid = 'k1') =>
      new SignJWT({ scope })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setSubject('robot')
        .setIssuer('https://idp.test')
        .setAudience('catalog')
        .setExpirationTime('5m')
        .sign(privateKey);
    server = await startServer({
      env: {
        AUTH_JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
        AUTH_JWT_ISSUER: 'https://idp.test',
        AUTH_JWT_AUDIENCE: 'catalog',
      },
    });
  });
  afterAll(async () => {
    await server?.stop();
    jwks?.close();
  });

  it('accepts a token signed by a key of the set and refuses one whose key is not there', async () => {
    const api = new Api(server.url);
    expect((await api.post('/v1/namespace/rs/create', {}, { authorization: `Bearer ${await sign('lance:admin:default')}` })).status).toBe(200);
    const unknownKey = await api.post('/v1/namespace/rs2/create', {}, { authorization: `Bearer ${await sign('lance:admin', 'k2')}` });
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.body.error).toMatch(/no key/);
  });
});

describe('safe defaults and rate limits', () => {
  it('refuses to serve beyond loopback without authentication unless told to', async () => {
    await expect(startServer({ env: { HOST: '0.0.0.0' } })).rejects.toThrow(/exited with 2[\s\S]*ALLOW_UNAUTHENTICATED_NETWORK/);
    const open = await startServer({ env: { HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED_NETWORK: 'true' } });
    try {
      expect(open.output()).toMatch(/no authentication configured and ALLOW_UNAUTHENTICATED_NETWORK=true/);
    } finally {
      await open.stop();
    }
  });

  it('says at start that it serves loopback only when no authentication is configured', async () => {
    const local = await startServer();
    try {
      expect(local.output()).toMatch(/no authentication configured: serving loopback \(127\.0\.0\.1\) only/);
    } finally {
      await local.stop();
    }
  });

  it('rejects bad auth settings at start with the reason', async () => {
    await expect(startServer({ env: { AUTH_API_KEYS: '[{"principal":"x","sha256":"abc","databases":[],"level":"owner"}]' } })).rejects.toThrow(
      /exited with 2[\s\S]*AUTH_API_KEYS[\s\S]*sha256/,
    );
    await expect(startServer({ env: { AUTH_JWT_SECRET: SECRET } })).rejects.toThrow(/AUTH_JWT_ISSUER: required/);
  });

  it('limits each principal separately, answering 429 code 21 with Retry-After', async () => {
    const server = await startServer({ env: { AUTH_API_KEYS: API_KEYS, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } });
    try {
      const reader = new Api(server.url, { 'x-api-key': KEYS.reader });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await reader.get('/v1/namespace/%24/list')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limited = await reader.get('/v1/namespace/%24/list');
      expect(limited.body).toMatchObject({ code: 21 });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another principal has its own budget, and probes are never limited.
      expect((await new Api(server.url, { 'x-api-key': KEYS.writer }).get('/v1/namespace/%24/list')).status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await reader.get('/healthz')).status).toBe(200);
      // A write through the data plane calls back into the server as the service: not counted.
      const admin = new Api(server.url, { 'x-api-key': KEYS.admin });
      expect((await admin.send('POST', '/v1/table/big/create', arrowStream(sampleTable(0, 10)), ARROW_STREAM)).status).toBe(200);
      expect((await admin.send('POST', '/v1/table/big/insert', arrowStream(sampleTable(10, 10)), ARROW_STREAM)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
