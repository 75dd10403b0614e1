import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { accessOf } from '../../apps/api/src/auth/access-policy';
import { httpStatusOf } from '../../apps/api/src/http/error-status';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer, tempDataDir } from '../support/server';
import { streamWithDeltaDictionaries } from '../support/arrow-corrupt';

interface Case {
  name: string;
  method: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** A read that may well succeed; every other case must be refused. */
  mayPass: boolean;
}

const BODY_LIMIT = 64 * 1024;

/** Files under `dir`, with their sizes and modification times, to prove nothing was touched. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        out[relative(dir, p)] = `${s.size}:${s.mtimeMs}`;
      }
    }
  };
  walk(dir);
  return out;
}

describe('bad input over every route', () => {
  let server: RunningServer;
  let api: Api;
  let otherTable: string;
  const outside = tempDataDir('outside-warehouse-');
  writeFileSync(join(outside, 'canary.txt'), 'do not touch');
  mkdirSync(join(outside, 'existing.lance/_versions'), { recursive: true });
  writeFileSync(join(outside, 'existing.lance/_versions/1.manifest'), 'not really a manifest');

  beforeAll(async () => {
    server = await startServer({ env: { BODY_LIMIT: String(BODY_LIMIT) } });
    api = new Api(server.url);
    expect((await api.post('/v1/namespace/fz/create', {})).status).toBe(200);
    expect((await api.send('POST', '/v1/table/fz%24t/create', arrowStream(sampleTable(0, 50)), ARROW_STREAM)).status).toBe(200);
    // Another database's table: no location a caller of `default` names may reach it.
    const other = api.withHeaders({ 'x-lance-database': 'other' });
    expect((await other.post('/v1/namespace/sec/create', {})).status).toBe(200);
    const created = await other.send<any>('POST', '/v1/table/sec%24t/create', arrowStream(sampleTable(0, 20)), ARROW_STREAM);
    expect(created.status).toBe(200);
    otherTable = created.body.location;
  });
  afterAll(() => server?.stop());

  it('answers a JSON error with the right code, never a 5xx, never a change, never a file outside the warehouse', async () => {
    const served = (await api.get('/openapi.json')).body.paths as Record<string, Record<string, unknown>>;
    const operations = Object.entries(served).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => m === 'get' || m === 'post')
        .map((m) => ({ method: m.toUpperCase(), template: path })),
    );
    expect(operations.length).toBeGreaterThan(50);

    const txId = (await api.post('/v1/table/fz%24t/describe', {})).body.transaction_id ?? '00000000-0000-0000-0000-000000000000';
    const validId = (template: string) =>
      template.startsWith('/v1/namespace/') ? 'fz' : template.startsWith('/v1/transaction/') || template.startsWith('/v1/history/transaction/') ? txId : 'fz%24t';
    const fill = (template: string, id: string) => template.replace('{id}', id).replace('{index_name}', 'idx').replace('{table_name}', id);

    const badIds: [string, string][] = [
      ['dot-dot', '..'],
      ['dot-dot in a path', 'fz%24..%24..%24etc'],
      ['slash', 'fz%2F..%2Fetc'],
      ['NUL', 'fz%00x'],
      ['empty part (delimiter inside a name)', 'fz%24%24t'],
      ['trailing delimiter', 'fz%24'],
      ['bad percent-encoding', '%E0%A4%A'],
      ['control characters', '%01%02%1b'],
      ['a very long id', 'a'.repeat(20_000)],
      ['a thousand parts', Array.from({ length: 1000 }, () => 'a').join('%24')],
    ];
    const malformedBodies: [string, string | Buffer][] = [
      ['malformed JSON', '{"id": ["fz"'],
      ['truncated JSON', '{"mode": "create", "properties": {"a": '],
      ['JSON array', '[1,2,3]'],
      ['JSON string', '"hello"'],
      ['JSON number', '42'],
      ['wrong id type', '{"id": 5}'],
      ['id of numbers', '{"id": [1, 2]}'],
      ['id not matching the path', '{"id": ["other", "thing"]}'],
      ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
      ['huge body', JSON.stringify({ id: ['fz', 't'], pad: 'x'.repeat(BODY_LIMIT * 2) })],
      ['binary garbage', Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919) % 256))],
      ['UTF-16 BOM and garbage', Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x22, 0x00])],
    ];
    const absurdReads: [string, object][] = [
      ['negative limit', { limit: -1 }],
      ['absurd limit', { limit: 1e308 }],
      ['fractional limit', { limit: 1.5 }],
      ['absurd k', { k: 1e12, vector: { single_vector: [1, 2, 3, 4, 5, 6, 7, 8] } }],
      ['negative k', { k: -5, vector: { single_vector: [1, 2, 3, 4, 5, 6, 7, 8] } }],
      ['absurd version', { version: 1e30 }],
      ['negative version', { version: -1 }],
      ['string where a number goes', { version: 'latest', limit: 'all' }],
    ];
    // Refused wherever they appear; the reads below also get valid but unusual ones.
    const refusedFilters = [
      "id = 1; DROP TABLE t",
      "' OR '1'='1",
      '\u0000',
      `${'('.repeat(3000)}id = 1${')'.repeat(3000)}`,
      `id IN (${Array.from({ length: 20_000 }, (_, i) => i).join(',')})`,
      'nosuchcolumn > 3',
      'id = ',
      'x'.repeat(100_000),
      "text = 'unterminated",
    ];
    const unusualFilters = ['id = 1 --', "regexp_match(text, '(a+)+$')", "text = 'a;b'", 'id > 0 AND (((id < 5)))'];
    // The delimiter is read by every route with an id; paging parameters by the list routes.
    const badDelimiters = ['?delimiter=', '?delimiter=%00', '?delimiter=123456789', '?delimiter=a&delimiter=b'];
    // A page token is where the previous page stopped: any string is a valid one.
    const badPaging = ['?limit=-5', '?limit=0', '?limit=99999999999999999999999', '?limit=abc', '?limit=1.5', '?limit=1&limit=2', '?page_token=a&page_token=b'];
    const isList = (template: string) => template.endsWith('/list') || template === '/v1/table' || template === '/v1/tables';

    const cases: Case[] = [];
    for (const { method, template } of operations) {
      // The console's page holds no data and reads no input.
      if (['/healthz', '/readyz', '/metrics', '/openapi.json', '/ui'].includes(template)) continue;
      const isRead = accessOf(method, template.replace(/\{(\w+)\}/g, ':$1')) === 'read';
      const withBody = method === 'POST';
      if (template.includes('{')) {
        for (const [why, id] of badIds) {
          cases.push({ name: `${method} ${template} with id: ${why}`, method, path: fill(template, id), body: withBody ? '{}' : undefined, mayPass: false });
        }
      }
      const path = fill(template, validId(template));
      const queries = [...(template.includes('{id}') ? badDelimiters : []), ...(isList(template) ? badPaging : [])];
      for (const q of queries) cases.push({ name: `${method} ${template} ${q}`, method, path: path + q, body: withBody ? 'null' : undefined, mayPass: false });
      cases.push({ name: `${method} ${template} in database ../../etc`, method, path, body: withBody ? '{}' : undefined, headers: { 'x-lance-database': '../../etc' }, mayPass: false });
      if (!withBody) continue;
      for (const [why, body] of malformedBodies) cases.push({ name: `${method} ${template} with ${why}`, method, path, body, mayPass: false });
      cases.push({ name: `${method} ${template} with invalid Arrow bytes`, method, path, body: Buffer.from('ARROW1 but not really'), headers: ARROW_STREAM, mayPass: false });
      cases.push({ name: `${method} ${template} with an unknown content type`, method, path, body: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' }, mayPass: false });
      if (isRead) for (const [why, body] of absurdReads) cases.push({ name: `${method} ${template} with ${why}`, method, path, body: JSON.stringify(body), mayPass: true });
    }
    for (const filter of [...refusedFilters, ...unusualFilters]) {
      const short = JSON.stringify(filter.slice(0, 30));
      const refused = refusedFilters.includes(filter);
      cases.push({ name: `query filter ${short}`, method: 'POST', path: '/v1/table/fz%24t/query', body: JSON.stringify({ filter, k: 5, vector: { single_vector: [1, 2, 3, 4, 5, 6, 7, 8] } }), mayPass: !refused });
      cases.push({ name: `count_rows predicate ${short}`, method: 'POST', path: '/v1/table/fz%24t/count_rows', body: JSON.stringify({ predicate: filter }), mayPass: !refused });
      cases.push({ name: `explain filter ${short}`, method: 'POST', path: '/v1/table/fz%24t/explain_plan', body: JSON.stringify({ query: { filter, k: 5, vector: { single_vector: [1, 2, 3, 4, 5, 6, 7, 8] } } }), mayPass: !refused });
      if (!refused) continue;
      cases.push({ name: `delete predicate ${short}`, method: 'POST', path: '/v1/table/fz%24t/delete', body: JSON.stringify({ predicate: filter }), mayPass: false });
      cases.push({ name: `update where ${short}`, method: 'POST', path: '/v1/table/fz%24t/update', body: JSON.stringify({ predicate: filter, updates: [['text', "'x'"]] }), mayPass: false });
    }
    const otherRoot = otherTable.slice(0, otherTable.indexOf('/other/') + '/other'.length);
    const locations = [
      `${outside}/evil.lance`,
      `${outside}/existing.lance`,
      '../../outside.lance',
      'file:///etc',
      '/etc',
      `${outside}/../x.lance`,
      's3://bucket/t.lance',
      // Another database's table, its folder, a path into it, and one escaping through `..`.
      otherTable,
      `file://${otherTable}`,
      otherRoot,
      `${otherRoot}/sec`,
      `${otherRoot}/sec/new.lance`,
      `${otherRoot.replace(/\/other$/, '/default')}/../other/sec/x.lance`,
    ];
    for (const location of locations) {
      cases.push({ name: `register at ${location}`, method: 'POST', path: '/v1/table/fz%24reg/register', body: JSON.stringify({ location }), mayPass: false });
      cases.push({ name: `declare at ${location}`, method: 'POST', path: '/v1/table/fz%24dec/declare', body: JSON.stringify({ location }), mayPass: false });
      cases.push({ name: `create at ${location}`, method: 'POST', path: '/v1/table/fz%24cre/create', body: arrowStream(sampleTable(0, 3)), headers: { ...ARROW_STREAM, 'x-lance-table-location': location }, mayPass: false });
      cases.push({ name: `commit a manifest from ${location}`, method: 'POST', path: '/v1/table/fz%24t/version/create', body: JSON.stringify({ version: 99, manifest_path: `${location}/_versions/1.manifest` }), mayPass: false });
    }

    // Dictionary batches past ARROW_MAX_DICTIONARY_BATCHES, and a stream of many under it; filters each allowed
    // on its own whose work adds up.
    cases.push({ name: 'insert 2,000 delta dictionaries', method: 'POST', path: '/v1/table/fz%24t/insert', body: streamWithDeltaDictionaries(2000), headers: ARROW_STREAM, mayPass: false });
    // Decoded in the data plane, then refused as rows that do not fit the table: nothing changes.
    cases.push({ name: 'insert 300 delta dictionaries', method: 'POST', path: '/v1/table/fz%24t/insert', body: streamWithDeltaDictionaries(300), headers: ARROW_STREAM, mayPass: false });
    const expensive = Array.from({ length: 50 }, () => 'length(repeat(text, 1000)) > 0').join(' AND ');
    cases.push({ name: 'count_rows with 50 repeats', method: 'POST', path: '/v1/table/fz%24t/count_rows', body: JSON.stringify({ predicate: expensive }), mayPass: true });
    cases.push({ name: 'query with 50 repeats', method: 'POST', path: '/v1/table/fz%24t/query', body: JSON.stringify({ filter: expensive, k: 5, vector: { single_vector: [1, 2, 3, 4, 5, 6, 7, 8] } }), mayPass: true });

    const bothVectors = { vector: { single_vector: [1, 2, 3, 4, 5, 6, 7, 8], multi_vector: [[1, 2, 3, 4, 5, 6, 7, 8]] }, k: 5 };
    cases.push({ name: 'query with both vectors', method: 'POST', path: '/v1/table/fz%24t/query', body: JSON.stringify(bothVectors), mayPass: false });
    cases.push({ name: 'analyze with both vectors', method: 'POST', path: '/v1/table/fz%24t/analyze_plan', body: JSON.stringify(bothVectors), mayPass: false });
    cases.push({ name: 'explain with both vectors', method: 'POST', path: '/v1/table/fz%24t/explain_plan', body: JSON.stringify({ query: bothVectors }), mayPass: false });

    const digestBefore = (await api.get('/v1/history/digest')).body.digest;
    const otherDigestBefore = (await api.get('/v1/history/digest', { 'x-lance-database': 'other' })).body.digest;
    const otherFilesBefore = listing(otherTable);
    const outsideBefore = listing(outside);
    const failures: string[] = [];
    let passed = 0;
    for (const c of cases) {
      const res = await api.send(c.method, c.path, c.body, { ...(c.body !== undefined && !c.headers?.['content-type'] ? { 'content-type': 'application/json' } : {}), ...c.headers }).catch((e: Error) => ({ status: -1, body: e.message, text: '' }) as never);
      const { status, body } = res as { status: number; body: { code?: unknown; error?: unknown } };
      if (status >= 200 && status < 300) {
        passed++;
        if (!c.mayPass) failures.push(`${c.name}: accepted (${status})`);
        continue;
      }
      if (status < 400 || status >= 500) failures.push(`${c.name}: status ${status} ${JSON.stringify(body).slice(0, 200)}`);
      else if (typeof body !== 'object' || typeof body?.error !== 'string' || typeof body?.code !== 'number') failures.push(`${c.name}: not a JSON error: ${JSON.stringify(body).slice(0, 200)}`);
      else if (httpStatusOf(body.code) !== status && ![413, 415, 431].includes(status)) failures.push(`${c.name}: code ${body.code} with status ${status}`);
    }
    // The server is still well, and nothing it holds or anything outside the warehouse changed.
    expect((await api.get('/readyz')).status).toBe(200);
    expect(failures).toEqual([]);
    expect((await api.get('/v1/history/digest')).body.digest).toBe(digestBefore);
    expect(listing(outside)).toEqual(outsideBefore);
    expect((await api.get('/v1/history/digest', { 'x-lance-database': 'other' })).body.digest).toBe(otherDigestBefore);
    expect(listing(otherTable)).toEqual(otherFilesBefore);
    expect((await api.post('/v1/table/fz%24t/count_rows', {})).body).toBe(50);
    console.info(`fuzz: ${cases.length} cases over ${operations.length} operations; ${passed} reads answered 2xx, every other case refused with a JSON error`);
    expect(cases.length).toBeGreaterThan(1500);
  }, 600_000);
});
