/**
 * What every operation of the spec shares, one test per operation and behaviour, made by loops
 * over the spec (coverage.ts names the tokens): on a server with API keys and JWTs configured,
 *
 * - `Op#401`: no credential, or an unknown one, is refused with 401 code 16, and nothing changes;
 * - `Op#403`: a credential below the operation's level (or of another database) gets 403 code 15;
 * - `Op.identity`: the body's `identity` (`api_key`, `auth_token`) authenticates a request that
 *   sends no credential header, exactly as the headers do, and a wrong one is refused;
 * - `Op#404`: a namespace, table or transaction the request names that does not exist: 404 with
 *   its code, and nothing changes;
 * - `Op#400`: a malformed body (or query) on an existing subject: 400 code 13, nothing changes;
 * - `Op.id`: the body's `id` must name what the path names (else 400 code 13), and never names
 *   anything else;
 * - `Op?delimiter`: the path's id split by another delimiter names the same object;
 * - `Op.context`: the context a write sends is recorded with the events it makes; a read records
 *   nothing.
 */
import { SignJWT } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import * as arrow from 'apache-arrow';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { ARROW, Api, NS, T, TX, arrowStream, createTable, expectError, newestEvents, ok, revision, rows, schemaOf, settled, suiteServer } from './fixtures';
import { covers, exemptions, specOperations } from './coverage';
import { CALLS, Call, CallOptions, requestOf } from './operations';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const SECRET = 'a-shared-secret-of-at-least-thirty-two-characters!';
const KEYS = { reader: 'reader-key-0123456789', writer: 'writer-key-0123456789', admin: 'admin-key-0123456789', elsewhere: 'elsewhere-key-0123456789' };
const API_KEYS = JSON.stringify([
  { principal: 'reader', sha256: sha256(KEYS.reader), databases: ['default'], level: 'read' },
  { principal: 'writer', sha256: sha256(KEYS.writer), databases: ['default'], level: 'write' },
  { principal: 'root', sha256: sha256(KEYS.admin), databases: ['*'], level: 'admin' },
  { principal: 'elsewhere', sha256: sha256(KEYS.elsewhere), databases: ['elsewhere'], level: 'admin' },
]);
const jwt = () =>
  new SignJWT({ scope: 'lance:admin' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('alice')
    .setIssuer('https://issuer.test')
    .setAudience('lance-catalog')
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));

const OPERATIONS = specOperations();
const EXEMPT = new Set(exemptions().flatMap((e) => e.tokens));
/** Whether the spec has the item (`#status`, `?param` or a body field) and it is not exempted. */
const has = (operationId: string, item: string) => {
  const op = OPERATIONS.find((o) => o.operationId === operationId)!;
  if (EXEMPT.has(`${operationId}${item.startsWith('#') || item.startsWith('?') ? '' : '.'}${item}`)) return false;
  return item.startsWith('#') ? op.statuses.includes(item.slice(1)) : item.startsWith('?') ? op.query.includes(item.slice(1)) : op.fields.includes(item);
};

/** The existing subject each kind of call names, and a missing one (with the code of its 404). */
const EXISTING = { namespace: ['g', 'sub'], table: ['g', 't'], parent: ['g', 'fresh'] };
const MISSING = { namespace: { id: ['g', 'nope'], code: 1 }, table: { id: ['g', 'nope'], code: 4 }, parent: { id: ['nope', 'fresh'], code: 1 } };
/** Bodies of the calls with no id in their path that name a missing namespace. */
const MISSING_BODY: Record<string, unknown> = {
  BatchCreateTableVersions: { entries: [{ id: ['nope', 't'], version: 1, manifest_path: 'x' }] },
  BatchCommitTables: { operations: [{ declare_table: { id: ['nope', 't'] } }] },
};


type Write = (api: Api, context: Record<string, string>, transactionId: string) => Promise<{ status: number; text: string; body?: any }>;

const stageManifest = async (api: Api, id: string[], version: number) => {
  const location = (await ok(api.post(`${T(...id)}/describe`, {}))).body.location as string;
  // A real manifest's bytes (the fixture table's first version), staged under Lance's staging name.
  const source = (await ok(api.post(`${T('g', 't')}/describe`, {}))).body.location as string;
  const first = readdirSync(`${source}/_versions`).find((f) => f.endsWith('.manifest'))!;
  mkdirSync(`${location}/_versions`, { recursive: true });
  const staged = `${location}/_versions/${18446744073709551615n - BigInt(version)}.manifest-${randomUUID()}`;
  writeFileSync(staged, readFileSync(`${source}/_versions/${first}`));
  return staged.slice(1);
};

/** A write of each operation that carries `context`, on fixtures of its own. */
const WRITES: Partial<Record<string, Write>> = {
  CreateNamespace: (api, context) => api.post(`${NS('g', 'ctx_ns')}/create`, { context }),
  DropNamespace: async (api, context) => {
    await ok(api.post(`${NS('g', 'ctx_gone')}/create`, {}));
    return api.post(`${NS('g', 'ctx_gone')}/drop`, { context });
  },
  RegisterTable: async (api, context) => {
    const made = await createTable(api, ['g', 'ctx_reg_src'], rows(0, 2));
    await ok(api.post(`${T('g', 'ctx_reg_src')}/deregister`, {}));
    return api.post(`${T('g', 'ctx_reg')}/register`, { location: made.location, context });
  },
  DeregisterTable: async (api, context) => {
    await ok(api.post(`${T('g', 'ctx_dereg')}/declare`, {}));
    return api.post(`${T('g', 'ctx_dereg')}/deregister`, { context });
  },
  RestoreTable: async (api, context) => {
    await createTable(api, ['g', 'ctx_restore'], rows(0, 2));
    await ok(api.send('POST', `${T('g', 'ctx_restore')}/insert`, arrowStream(rows(2, 1)), ARROW));
    return api.post(`${T('g', 'ctx_restore')}/restore`, { version: 1, context });
  },
  RenameTable: async (api, context) => {
    await ok(api.post(`${T('g', 'ctx_ren')}/declare`, {}));
    return api.post(`${T('g', 'ctx_ren')}/rename`, { new_table_name: 'ctx_ren2', context });
  },
  CreateTableVersion: async (api, context) => {
    await ok(api.post(`${T('g', 'ctx_ver')}/declare`, {}));
    return api.post(`${T('g', 'ctx_ver')}/version/create`, { version: 1, manifest_path: await stageManifest(api, ['g', 'ctx_ver'], 1), naming_scheme: 'V2', context });
  },
  BatchDeleteTableVersions: async (api, context) => {
    await createTable(api, ['g', 'ctx_bdel'], rows(0, 2));
    await ok(api.send('POST', `${T('g', 'ctx_bdel')}/insert`, arrowStream(rows(2, 1)), ARROW));
    return api.post(`${T('g', 'ctx_bdel')}/version/delete`, { ranges: [{ start_version: 1, end_version: 2 }], context });
  },
  BatchCreateTableVersions: async (api, context) => {
    await ok(api.post(`${T('g', 'ctx_bcv')}/declare`, {}));
    return api.post('/v1/table/version/batch-create', {
      entries: [{ id: ['g', 'ctx_bcv'], version: 1, manifest_path: await stageManifest(api, ['g', 'ctx_bcv'], 1), naming_scheme: 'V2' }],
      context,
    });
  },
  BatchCommitTables: (api, context) => api.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['g', 'ctx_bct'] } }], context }),
  AlterTableAlterColumns: async (api, context) => {
    await createTable(api, ['g', 'ctx_alter'], rows(0, 2));
    return api.post(`${T('g', 'ctx_alter')}/alter_columns`, { alterations: [{ path: 'name', rename: 'label' }], context });
  },
  UpdateFieldMetadata: async (api, context) => {
    await createTable(api, ['g', 'ctx_meta'], rows(0, 2));
    return api.post(`${T('g', 'ctx_meta')}/update_field_metadata`, { updates: [{ path: 'id', metadata: { unit: 'count' } }], context });
  },
  AlterTableDropColumns: async (api, context) => {
    await createTable(api, ['g', 'ctx_dropcol'], rows(0, 2));
    return api.post(`${T('g', 'ctx_dropcol')}/drop_columns`, { columns: ['score'], context });
  },
  UpdateTable: async (api, context) => {
    await createTable(api, ['g', 'ctx_update'], rows(0, 2));
    return api.post(`${T('g', 'ctx_update')}/update`, { updates: [['score', '0']], context });
  },
  DeleteFromTable: async (api, context) => {
    await createTable(api, ['g', 'ctx_delete'], rows(0, 2));
    return api.post(`${T('g', 'ctx_delete')}/delete`, { predicate: 'id = 0', context });
  },
  AlterTableAddColumns: async (api, context) => {
    await createTable(api, ['g', 'ctx_add'], rows(0, 2));
    return api.post(`${T('g', 'ctx_add')}/add_columns`, { new_columns: [{ name: 'plus', expression: 'id + 1' }], context });
  },
  AlterTableBackfillColumns: async (api, context) => {
    await createTable(api, ['g', 'ctx_backfill'], rows(0, 2));
    await ok(api.post(`${T('g', 'ctx_backfill')}/add_columns`, { new_columns: [{ name: 'doubled', computed: 'id * 2' }] }));
    const res = await api.post(`${T('g', 'ctx_backfill')}/backfill_column`, { column: 'doubled', context });
    if (res.status === 202) await settled(api, res.body.job_id);
    return res;
  },
  CreateMaterializedView: async (api, context) => {
    await createTable(api, ['ctx_src'], rows(0, 3), `?storage_options=${encodeURIComponent(JSON.stringify({ new_table_enable_stable_row_ids: 'true' }))}`);
    return api.post('/v1/materialized_view/ctx_view/create', { kind: 'query', source_query: JSON.stringify({ source_table: 'ctx_src', select: ['id'] }), output_schema: idSchema(), context });
  },
  RefreshMaterializedView: async (api, context) => {
    await createTable(api, ['ctx_src2'], rows(0, 3), `?storage_options=${encodeURIComponent(JSON.stringify({ new_table_enable_stable_row_ids: 'true' }))}`);
    await ok(api.post('/v1/materialized_view/ctx_view2/create', { kind: 'query', source_query: JSON.stringify({ source_table: 'ctx_src2', select: ['id'] }), output_schema: idSchema() }), 201);
    const res = await api.post('/v1/materialized_view/ctx_view2/refresh', { context });
    if (res.status === 202) await settled(api, res.body.job_id);
    return res;
  },
  CreateTableIndex: async (api, context) => {
    await createTable(api, ['g', 'ctx_index'], rows(0, 2));
    const res = await api.post(`${T('g', 'ctx_index')}/create_index`, { column: 'id', index_type: 'BTREE', context });
    if (res.status === 200) await settled(api, res.body.transaction_id);
    return res;
  },
  CreateTableScalarIndex: async (api, context) => {
    await createTable(api, ['g', 'ctx_scalar'], rows(0, 2));
    const res = await api.post(`${T('g', 'ctx_scalar')}/create_scalar_index`, { column: 'name', index_type: 'BITMAP', context });
    if (res.status === 200) await settled(api, res.body.transaction_id);
    return res;
  },
  DeclareTable: (api, context) => api.post(`${T('g', 'ctx_declared')}/declare`, { context }),
  CreateTableTag: async (api, context) => {
    await createTable(api, ['g', 'ctx_tags'], rows(0, 2));
    return api.post(`${T('g', 'ctx_tags')}/tags/create`, { tag: 'made', version: 1, context });
  },
  UpdateTableTag: async (api, context) => {
    await createTable(api, ['g', 'ctx_tags2'], rows(0, 2));
    await ok(api.post(`${T('g', 'ctx_tags2')}/tags/create`, { tag: 'moved', version: 1 }));
    return api.post(`${T('g', 'ctx_tags2')}/tags/update`, { tag: 'moved', version: 1, context });
  },
  DeleteTableTag: async (api, context) => {
    await createTable(api, ['g', 'ctx_tags3'], rows(0, 2));
    await ok(api.post(`${T('g', 'ctx_tags3')}/tags/create`, { tag: 'gone', version: 1 }));
    return api.post(`${T('g', 'ctx_tags3')}/tags/delete`, { tag: 'gone', context });
  },
  CreateTableBranch: async (api, context) => {
    await createTable(api, ['g', 'ctx_branch'], rows(0, 2));
    return api.post(`${T('g', 'ctx_branch')}/branches/create`, { name: 'dev', context });
  },
  DeleteTableBranch: async (api, context) => {
    await createTable(api, ['g', 'ctx_branch2'], rows(0, 2));
    await ok(api.post(`${T('g', 'ctx_branch2')}/branches/create`, { name: 'dev' }));
    return api.post(`${T('g', 'ctx_branch2')}/branches/delete`, { name: 'dev', context });
  },
  AlterTransaction: (api, context, transactionId) => api.post(`${TX(transactionId)}/alter`, { actions: [{ setPropertyAction: { key: 'note', value: 'seen' } }], context }),
};

function idSchema(): string {
  return schemaOf({ id: new arrow.Int32() });
}

describe('what every operation shares', () => {
  const s = suiteServer({ env: { AUTH_API_KEYS: API_KEYS, AUTH_JWT_SECRET: SECRET, AUTH_JWT_ISSUER: 'https://issuer.test', AUTH_JWT_AUDIENCE: 'lance-catalog' } });
  const as = (key?: string) => new Api(s.url, key ? { 'x-api-key': key } : {});
  const admin = () => as(KEYS.admin);
  let transactionId = '';

  const send = (api: Api, call: Call, id: string, opts: CallOptions = {}) => {
    const r = requestOf(call, id, opts);
    return api.send<any>(r.method, r.url, r.body, r.headers);
  };
  const pathId = (call: Call, parts: string[], delimiter = '$') => (call.subject === 'transaction' ? encodeURIComponent(transactionId) : Api.id(parts, delimiter));
  const existing = (call: Call) => pathId(call, call.subject === 'none' || call.subject === 'transaction' ? [] : EXISTING[call.subject]);

  beforeAll(async () => {
    const api = admin();
    for (const ns of [['g'], ['g', 'sub']]) await ok(api.post(`${NS(...ns)}/create`, {}));
    transactionId = (await createTable(api, ['g', 't'], rows(0, 5))).transaction_id;
    await ok(api.post(`${T('g', 't')}/tags/create`, { tag: 'v1', version: 1 }));
    const build = await ok(api.post(`${T('g', 't')}/create_index`, { column: 'id', index_type: 'BTREE', name: 'id_idx' }));
    expect((await settled(api, build.body.transaction_id)).status).toBe('Succeeded');
  }, 60_000);

  for (const { operationId } of OPERATIONS) {
    const call = CALLS[operationId];

    if (has(operationId, '#401')) {
      covers([`${operationId}#401`], 'no credential, or an unknown one: 401 code 16, and nothing changes', async () => {
        const before = await revision(admin());
        for (const api of [as(), as('not-a-key'), new Api(s.url, { authorization: 'Bearer not-a-token' })]) {
          expectError(await send(api, call, existing(call)), 401, 16);
        }
        expect(await revision(admin())).toBe(before);
      });
    }

    if (has(operationId, '#403')) {
      const below = { read: 'elsewhere', write: 'reader', admin: 'writer' } as const;
      covers([`${operationId}#403`], `a credential below the ${call.level} level it needs, or of another database: 403 code 15, and nothing changes`, async () => {
        const before = await revision(admin());
        expectError(await send(as(KEYS[below[call.level]]), call, existing(call)), 403, 15);
        if (call.level === 'admin') expectError(await send(as(KEYS.reader), call, existing(call)), 403, 15);
        expect(await revision(admin())).toBe(before);
      });
    }

    if (has(operationId, 'identity')) {
      covers([`${operationId}.identity`], "the body's api_key or auth_token authenticates as the headers do; a wrong one is 401 code 16", async () => {
        const body = (identity: object) => ({ ...(MISSING_BODY[operationId] ?? (call.valid as object)), identity });
        const id = missingId(call);
        const withHeader = await send(admin(), call, id, { body: body({}) });
        expect(withHeader.status).toBe(404);
        for (const identity of [{ api_key: KEYS.admin }, { auth_token: await jwt() }]) {
          const res = await send(as(), call, id, { body: body(identity) });
          expect({ identity: Object.keys(identity), status: res.status, code: res.body.code }).toEqual({ identity: Object.keys(identity), status: 404, code: withHeader.body.code });
        }
        expectError(await send(as(), call, id, { body: body({ api_key: 'not-a-key' }) }), 401, 16);
        // A read-only key in the body is held to its level like the same key in a header.
        if (call.level !== 'read') expectError(await send(as(), call, id, { body: body({ api_key: KEYS.reader }) }), 403, 15);
      });
    }

    if (has(operationId, '#404')) {
      covers([`${operationId}#404`], 'names a namespace, table or transaction that does not exist: 404 with its code, and nothing changes', async () => {
        const api = admin();
        const before = await revision(api);
        const res = await send(api, call, missingId(call), MISSING_BODY[operationId] ? { body: MISSING_BODY[operationId] } : {});
        const code = call.subject === 'transaction' ? 10 : call.subject === 'none' ? 1 : MISSING[call.subject].code;
        expectError(res, 404, code);
        expect(await revision(api)).toBe(before);
      });
    }

    if (has(operationId, '#400')) {
      covers([`${operationId}#400`], 'a malformed body or query on an existing subject: 400 code 13, and nothing changes', async () => {
        const api = admin();
        const before = await revision(api);
        const malformed =
          call.body === 'arrow'
            ? { body: Buffer.from('these bytes are not an Arrow IPC stream') }
            : call.method === 'GET' || /\/(list)$/.test(call.route)
              ? { query: 'limit=none' }
              : { body: ['not', 'an', 'object'] };
        expectError(await send(api, call, existing(call), malformed), 400, 13);
        expect(await revision(api)).toBe(before);
      });
    }

    if (has(operationId, 'id')) {
      covers([`${operationId}.id`], "the body's id must name what the path names (else 400 code 13); it never names another object", async () => {
        const api = admin();
        const before = await revision(api);
        const parts = call.subject === 'transaction' ? [transactionId] : EXISTING[call.subject as 'table'];
        const other = call.subject === 'transaction' ? [randomUUID()] : [...parts.slice(0, -1), 'other'];
        expectError(await send(api, call, existing(call), { body: { ...(call.valid as object), id: other } }), 400, 13, /does not match the path id/);
        // The same id in both: the path's object is the one looked up (here a missing one).
        const missing = missingParts(call);
        const missingPath = call.subject === 'transaction' ? missing[0] : Api.id(missing);
        const res = await send(api, call, missingPath, { body: { ...(call.valid as object), id: missing } });
        expect(res.status).toBe(404);
        // An existing object named by the body alone is not what the request acts on.
        const redirected = await send(api, call, missingPath, { body: { ...(call.valid as object), id: parts } });
        expect(redirected.status).toBe(404);
        expect(await revision(api)).toBe(before);
      });
    }

    if (has(operationId, '?delimiter')) {
      covers([`${operationId}?delimiter`], 'the id split by another delimiter names the same object; without it, the same text names another', async () => {
        const api = admin();
        if (operationId === 'ListAllTables') {
          // No id in its path: the delimiter is how the answer writes the tables' ids.
          expect((await ok(api.get('/v1/table?delimiter=.'))).body.tables).toContain('g.t');
          expect((await ok(api.get('/v1/table'))).body.tables).toContain('g$t');
          return;
        }
        if (call.subject === 'none') {
          // The batches name tables by arrays: the delimiter is the character no name in them may hold.
          const body = (name: string) =>
            operationId === 'BatchCommitTables' ? { operations: [{ declare_table: { id: ['g', name] } }] } : { entries: [{ id: ['g', name], version: 1, manifest_path: 'x' }] };
          expectError(await send(api, call, '', { body: body('dotted.name'), query: 'delimiter=.' }), 400, 13, /contains the delimiter '\.'/);
          expect((await send(api, call, '', { body: body('dotted.name') })).text).not.toMatch(/delimiter/);
          return;
        }
        const malformed = call.body === 'arrow' ? { body: Buffer.from('not arrow') } : call.method === 'GET' || /\/(list)$/.test(call.route) ? { query: 'limit=none' } : { body: ['x'] };
        if (call.subject === 'transaction') {
          // A transaction id is one part: read with `-` as the delimiter, a uuid is five parts, and names no transaction.
          expectError(await send(api, call, existing(call), malformed), 400, 13);
          expectError(await send(api, call, existing(call), { ...malformed, query: 'delimiter=-' }), 404, 10);
          return;
        }
        if (call.subject === 'parent') {
          // It makes its subject: `nope.fresh` split by `.` lies in a namespace that does not exist (404);
          // read with `$` it is one name in the root namespace, which exists (so the body is judged: 400).
          expectError(await send(api, call, Api.id(['nope', 'fresh'], '.'), { ...malformed, query: 'delimiter=.' }), 404, 1);
          expectError(await send(api, call, Api.id(['nope', 'fresh'], '.'), malformed), 400, 13);
          return;
        }
        const parts = EXISTING[call.subject as 'table'];
        // Found (so the malformed request is refused for itself: 400), with the delimiter it was written with...
        const found = await send(api, call, Api.id(parts, '.'), { ...malformed, query: [malformed.query, 'delimiter=.'].filter(Boolean).join('&') });
        expectError(found, 400, 13);
        // ...and not found when read with the default `$`: `g.sub` is then one name.
        const notFound = await send(api, call, Api.id(parts, '.'), malformed);
        expect(notFound.status).toBe(404);
      });
    }

    if (has(operationId, 'context')) {
      const write = WRITES[operationId];
      covers([`${operationId}.context`], WRITES[operationId] ? 'recorded with the events the write makes' : 'a read records nothing, whatever context it carries', async () => {
        const api = admin();
        const context = { probe: `${operationId}-${randomUUID()}` };
        if (!write) {
          const before = await revision(api);
          const res = await send(api, call, existing(call), { body: { ...(call.valid as object), context } });
          expect([res.status, res.text.slice(0, 300)]).toEqual([200, expect.anything()]);
          expect(await revision(api)).toBe(before);
          return;
        }
        const res = await write(api, context, transactionId);
        expect([res.status, res.text.slice(0, 300)]).toEqual([expect.any(Number), expect.anything()]);
        expect(res.status).toBeLessThan(300);
        const events = (await newestEvents(api, 100)).filter((e) => e.context.probe === context.probe);
        expect(events.length).toBeGreaterThan(0);
        // The events of the request's own transaction, when its answer names it.
        const transaction = (res as { body?: { transaction_id?: unknown; job_id?: unknown } }).body;
        const named = [transaction?.transaction_id, transaction?.job_id].flat().filter((t): t is string => typeof t === 'string');
        if (named.length) expect(events.filter((e) => named.includes(e.transaction_id)).length).toBeGreaterThan(0);
      });
    }
  }

  function missingParts(call: Call): string[] {
    return call.subject === 'transaction' ? [randomUUID()] : call.subject === 'none' ? [] : MISSING[call.subject].id;
  }
  function missingId(call: Call): string {
    return call.subject === 'transaction' ? randomUUID() : Api.id(missingParts(call));
  }


});
