import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable, waitFor } from '../support/arrow-data';
import { streamWithDeltaDictionaries } from '../support/arrow-corrupt';
import { RunningServer, startServer } from '../support/server';
import * as arrow from 'apache-arrow';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = {
  alphaAdmin: 'alpha-admin-key-0123456789',
  alphaWriter: 'alpha-writer-key-0123456789',
  alphaReader: 'alpha-reader-key-0123456789',
  betaAdmin: 'beta-admin-key-0123456789',
};
const TIMEOUT_MS = 6000;

/**
 * One caller cannot take the service from the others: while database alpha's keys try each way of
 * denying service, database beta keeps working (its describe within 1 s, its count on a small table
 * within 10 s, /healthz within 1 s); and a write key cannot reach an admin's rights through a
 * policy property or a job's record.
 */
describe('no caller takes the service from the others', () => {
  let server: RunningServer;
  const as = (key: string, database: string) => new Api(server.url, { 'x-api-key': key, 'x-lance-database': database });
  let alphaAdmin: Api;
  let alphaWriter: Api;
  let alphaReader: Api;
  let beta: Api;

  beforeAll(async () => {
    server = await startServer({
      env: {
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'alpha-admin', sha256: sha256(KEYS.alphaAdmin), databases: ['alpha'], level: 'admin' },
          { principal: 'alpha-writer', sha256: sha256(KEYS.alphaWriter), databases: ['alpha'], level: 'write' },
          { principal: 'alpha-reader', sha256: sha256(KEYS.alphaReader), databases: ['alpha'], level: 'read' },
          { principal: 'beta-admin', sha256: sha256(KEYS.betaAdmin), databases: ['beta'], level: 'admin' },
        ]),
        DATA_PLANE_TIMEOUT_MS: String(TIMEOUT_MS),
        DATA_PLANE_QUEUE_PER_DATABASE: '2',
        LIVE_FEEDS_PER_PRINCIPAL: '3',
        LIVE_FEEDS_MAX: '5',
        MAINTENANCE_PLAN_DELAY_MS: '200',
        MAINTENANCE_PLAN_MAX_DELAY_MS: '1000',
        MAINTENANCE_EXPIRY_MARGIN_SECONDS: '0',
      },
    });
    alphaAdmin = as(KEYS.alphaAdmin, 'alpha');
    alphaWriter = as(KEYS.alphaWriter, 'alpha');
    alphaReader = as(KEYS.alphaReader, 'alpha');
    beta = as(KEYS.betaAdmin, 'beta');
    expect((await alphaAdmin.post('/v1/namespace/a/create', {})).status).toBe(200);
    expect((await beta.post('/v1/namespace/b/create', {})).status).toBe(200);
    expect((await beta.send('POST', '/v1/table/b%24small/create', arrowStream(sampleTable(0, 24)), ARROW_STREAM)).status).toBe(200);
    // Alpha's large table: 100,000 rows of text, in batches.
    const words = Array.from({ length: 100_000 }, (_, i) => `row ${i} of the large table`);
    expect((await alphaAdmin.send('POST', '/v1/table/a%24large/create', arrowStream(arrow.tableFromArrays({ s: words })), ARROW_STREAM)).status).toBe(200);
  }, 120_000);
  afterAll(() => server?.stop());

  /**
   * Runs `attack` while beta's describe, count and /healthz are asked over and over; answers the
   * worst time of each (each must answer within its bound, every time).
   */
  async function whileNeighbourWorks(attack: () => Promise<void>) {
    let stop = false;
    const worst = { describe: 0, count: 0, healthz: 0 };
    const describes: number[] = [];
    const timed = async (what: keyof typeof worst, call: () => Promise<{ status: number }>) => {
      const started = Date.now();
      const answer = await call();
      expect({ what, status: answer.status }).toEqual({ what, status: 200 });
      const ms = Date.now() - started;
      worst[what] = Math.max(worst[what], ms);
      if (what === 'describe') describes.push(ms);
    };
    const loop = async (what: keyof typeof worst, call: () => Promise<{ status: number }>, pauseMs: number) => {
      while (!stop) {
        await timed(what, call);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    };
    const neighbour = Promise.all([
      loop('describe', () => beta.post('/v1/table/b%24small/describe', {}), 50),
      loop('count', () => beta.post('/v1/table/b%24small/count_rows', {}), 200),
      loop('healthz', () => beta.get('/healthz'), 100),
    ]);
    try {
      await attack();
    } finally {
      stop = true;
      await neighbour;
    }
    expect(worst.describe).toBeLessThan(1000);
    expect(worst.count).toBeLessThan(2000);
    expect(worst.healthz).toBeLessThan(1000);
    // Its catalog reads keep their pace: the 99th percentile of describe under 100 ms.
    const sorted = describes.sort((a, b) => a - b);
    expect(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]).toBeLessThan(100);
    return worst;
  }

  it('refuses an unauthenticated 64 MB body before reading it, while the neighbour works', async () => {
    await whileNeighbourWorks(async () => {
      const started = Date.now();
      const answer = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
        const req = httpRequest(`${server.url}/v1/namespace/a/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) },
        });
        let sent = 0;
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, body, sent }));
        });
        req.on('error', reject);
        // A first megabyte only: the answer must come without the rest.
        req.write('{"k":');
        req.write(chunk, () => (sent += chunk.length));
      });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body).code).toBe(16);
      expect(answer.sent).toBeLessThan(64 * 1024 * 1024);
    });
    // With a credential, a JSON body past JSON_BODY_LIMIT is refused by its declared length, not parsed either.
    const big = await alphaAdmin.post('/v1/namespace/big/create', { properties: { pad: 'x'.repeat(5 * 1024 * 1024) } });
    expect({ status: big.status, code: big.body.code }).toEqual({ status: 413, code: 13 });
    expect(big.body.error).toMatch(/larger than 4194304 bytes \(JSON_BODY_LIMIT\)/);
    // And one object of too many members is refused as it arrives.
    const keys = `{"properties": {${Array.from({ length: 20_000 }, (_, i) => `"k${i}": "v"`).join(',')}}}`;
    const wide = await alphaAdmin.send<any>('POST', '/v1/namespace/wide/create', keys, { 'content-type': 'application/json' });
    expect({ status: wide.status, code: wide.body.code }).toEqual({ status: 400, code: 13 });
    expect(wide.body.error).toMatch(/more than 10000 members \(JSON_MAX_OBJECT_KEYS\)/);
  });

  it('decodes no Arrow body on the API\'s event loop: delta dictionaries past the limit are refused, under it they cost only their request', async () => {
    expect((await alphaWriter.send('POST', '/v1/table/a%24dict/create', streamWithDeltaDictionaries(0), ARROW_STREAM)).status).toBe(200);
    // Made before the neighbour starts: apache-arrow takes this test process's own time to write them.
    const [tooMany, many] = [streamWithDeltaDictionaries(10_000), streamWithDeltaDictionaries(998)];
    await whileNeighbourWorks(async () => {
      const refused = await alphaWriter.send<any>('POST', '/v1/table/a%24dict/insert', tooMany, ARROW_STREAM);
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 13 });
      expect(refused.body.error).toMatch(/more than 1000 dictionary batches \(ARROW_MAX_DICTIONARY_BATCHES\)/);
      const allowed = await alphaWriter.send<any>('POST', '/v1/table/a%24dict/insert', many, ARROW_STREAM);
      expect(allowed.status).toBe(200);
      expect(allowed.body.num_inserted_rows).toBe(1);
    });
    expect((await alphaReader.post('/v1/table/a%24dict/count_rows', {})).body).toBe(2);
  });

  const EXPENSIVE = Array.from({ length: 10 }, (_, i) => `length(repeat(s, ${1000 - i})) > 0`).join(' AND ');

  it('stops a data operation whose caller left, and keeps a process free for another database meanwhile', async () => {
    const ends = async () => Number(/lance_catalog_data_plane_process_ends_total\{reason="cancelled"\} (\d+)/.exec((await alphaAdmin.get('/metrics')).text)?.[1] ?? 0);
    const before = await ends();
    await whileNeighbourWorks(async () => {
      const abandoned = [0, 1].map(async () => {
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), 1500);
        await fetch(`${server.url}/v1/table/a%24large/count_rows`, {
          method: 'POST',
          signal: controller.signal,
          headers: { 'content-type': 'application/json', 'x-api-key': KEYS.alphaReader, 'x-lance-database': 'alpha' },
          body: JSON.stringify({ predicate: EXPENSIVE }),
        }).catch((e) => expect((e as Error).name).toBe('AbortError'));
        clearTimeout(timer);
      });
      await Promise.all(abandoned);
      // Both abandoned operations end with their processes, well before they would have finished.
      await waitFor(ends, (n) => n >= before + 1, 5000);
    });
    // Alpha's next data operation runs at once.
    const started = Date.now();
    expect((await alphaReader.post('/v1/table/a%24large/count_rows', { predicate: "s = 'row 7 of the large table'" })).body).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
  }, 60_000);

  it('bounds a database\'s waiting data operations: past DATA_PLANE_QUEUE_PER_DATABASE, 503 code 17 with Retry-After to a principal holding its part of them', async () => {
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    await whileNeighbourWorks(async () => {
      // One runs (alpha holds one of the two processes at most), two wait, the others are refused at once.
      const answers = controllers.map((controller) =>
        fetch(`${server.url}/v1/table/a%24large/count_rows`, {
          method: 'POST',
          signal: controller.signal,
          headers: { 'content-type': 'application/json', 'x-api-key': KEYS.alphaReader, 'x-lance-database': 'alpha' },
          body: JSON.stringify({ predicate: EXPENSIVE }),
        }).then(async (res) => ({ status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as { code?: number } }), () => undefined),
      );
      const refused = await Promise.race([Promise.all(answers.slice(3)), new Promise<undefined>((r) => setTimeout(() => r(undefined), 2000))]);
      expect(refused?.map((a) => [a?.status, a?.body.code, !!a?.retryAfter])).toEqual([
        [503, 17, true],
        [503, 17, true],
      ]);
      expect(refused?.[0]?.body).toMatchObject({ error: expect.stringMatching(/already has 2 data operations waiting .*, 2 of them this caller's/) });
      // The queue is full of one principal's operations: another of the database is still queued.
      const admin = alphaAdmin.post('/v1/table/a%24large/count_rows', {});
      await new Promise((r) => setTimeout(r, 300));
      for (const c of controllers) c.abort();
      await Promise.all(answers);
      const counted = await admin;
      expect({ status: counted.status, body: counted.body }).toEqual({ status: 200, body: 100_000 });
    });
    expect((await alphaAdmin.get('/metrics')).text).toMatch(/lance_catalog_data_plane_queue_full_total 2/);
  }, 60_000);

  it(`stops a data operation that runs past DATA_PLANE_TIMEOUT_MS with 400 code 13, and counts it`, async () => {
    await whileNeighbourWorks(async () => {
      const started = Date.now();
      const slow = await alphaReader.post('/v1/table/a%24large/count_rows', { predicate: `${EXPENSIVE} AND ${EXPENSIVE}` });
      expect({ status: slow.status, code: slow.body.code }).toEqual({ status: 400, code: 13 });
      expect(slow.body.error).toMatch(new RegExp(`ran longer than ${TIMEOUT_MS} ms.*DATA_PLANE_TIMEOUT_MS`));
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 5000);
    });
    const metrics = (await alphaAdmin.get('/metrics')).text;
    expect(Number(/lance_catalog_data_plane_process_ends_total\{reason="timeout"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    expect(metrics).toMatch(/lance_catalog_data_plane_queue_seconds_count \d+/);
  }, 60_000);

  it('bounds live feeds per principal and in all (429 code 21), while replays of the whole log leave the neighbour working', async () => {
    for (let i = 0; i < 150; i++) await alphaAdmin.post(`/v1/namespace/n${i}/create`, {});
    const open: AbortController[] = [];
    const feed = async (key: string, database: string) => {
      const controller = new AbortController();
      const res = await fetch(`${server.url}/v1/history/live?after=-1`, { signal: controller.signal, headers: { 'x-api-key': key, 'x-lance-database': database } });
      if (res.status === 200) {
        open.push(controller);
        // Read slowly: a greedy or slow reader holds only its own socket.
        void res.body!.getReader().read().catch(() => undefined);
      } else await res.text();
      return res;
    };
    try {
      await whileNeighbourWorks(async () => {
        for (let i = 0; i < 3; i++) expect((await feed(KEYS.alphaReader, 'alpha')).status).toBe(200);
        const fourth = await feed(KEYS.alphaReader, 'alpha');
        expect(fourth.status).toBe(429);
        expect(fourth.headers.get('retry-after')).toBeTruthy();
        for (let i = 0; i < 2; i++) expect((await feed(KEYS.alphaAdmin, 'alpha')).status).toBe(200);
        const past = await feed(KEYS.betaAdmin, 'beta');
        expect(past.status).toBe(429);
        await new Promise((r) => setTimeout(r, 1000));
      });
    } finally {
      for (const c of open) c.abort();
    }
    // Closed feeds give their places back.
    await waitFor(async () => (await feed(KEYS.betaAdmin, 'beta')).status, (s) => s === 200, 5000);
    for (const c of open.splice(0)) c.abort();
    expect((await alphaAdmin.get('/metrics')).text).toMatch(/lance_catalog_live_feeds_refused_total\{limit="principal"\} 1/);
  }, 60_000);

  it('lets only an admin set a retention, and records the versions it deletes with that admin', async () => {
    const policy = { 'maintenance.expire.keep_last': '1', 'maintenance.expire.older_than_seconds': '0' };
    for (const refused of [
      await alphaWriter.post('/v1/table/a%24kept/declare', { properties: policy }),
      await alphaWriter.send<any>('POST', '/v1/table/a%24kept/create', arrowStream(sampleTable(0, 2)), { ...ARROW_STREAM, 'x-lance-table-properties': JSON.stringify(policy) }),
      await alphaWriter.post('/v1/table/batch-commit', { operations: [{ declare_table: { id: ['a', 'kept'], properties: policy } }] }),
    ]) {
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 15 });
    }
    const declared = await alphaWriter.post('/v1/table/a%24kept/declare', { properties: { 'maintenance.compact': 'false' } });
    expect(declared.status).toBe(200);
    expect((await alphaAdmin.post('/v1/table/a%24expiring/declare', { properties: policy })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await alphaWriter.send('POST', '/v1/table/a%24expiring/insert', arrowStream(sampleTable(i * 5, 5)), ARROW_STREAM)).status).toBe(200);
    const deleted = await waitFor(
      async (): Promise<Array<{ principal?: string }>> =>
        (await alphaAdmin.get('/v1/history/table/a%24expiring')).body.events.filter((e: { type: string }) => e.type === 'TableVersionsDeleted'),
      (events) => events.length > 0,
      60_000,
    );
    expect(deleted.every((e: { principal?: string }) => e.principal === 'alpha-admin')).toBe(true);
  }, 90_000);

  it("keeps a job's record the server's: a write key cannot alter an admin's transaction, nor the properties the server wrote", async () => {
    const history = (await alphaAdmin.get('/v1/history/table/a%24expiring')).body.events;
    const expiry = history.find((e: { type: string }) => e.type === 'TableMaintenanceRequested').transaction_id;
    // The expiry's record is compared before and after: taken once its job has ended.
    const before = await waitFor(
      async () => (await alphaAdmin.post(`/v1/transaction/${expiry}/describe`, {})).body,
      (tx: { status: string }) => ['Succeeded', 'Failed', 'Canceled'].includes(tx.status),
      60_000,
    );
    const forged = await alphaWriter.post(`/v1/transaction/${expiry}/alter`, {
      actions: [{ setPropertyAction: { key: 'operation', value: 'CompactTable' } }, { unsetPropertyAction: { key: 'cutoff' } }],
    });
    expect({ status: forged.status, code: forged.body.code }).toEqual({ status: 403, code: 15 });
    expect(forged.body.error).toMatch(/alpha-writer may not alter a transaction of ExpireTableVersions: that needs admin/);
    const ownInsert = (await alphaWriter.send<any>('POST', '/v1/table/a%24kept/insert', arrowStream(sampleTable(0, 3)), ARROW_STREAM)).body.transaction_id;
    for (const actions of [
      [{ setPropertyAction: { key: 'operation', value: 'DropTable' } }],
      [{ unsetPropertyAction: { key: 'started_at' } }],
    ]) {
      const refused = await alphaWriter.post(`/v1/transaction/${ownInsert}/alter`, { actions });
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 15 });
      expect(refused.body.error).toMatch(/is the server's record of the job/);
    }
    // A Skip set of a key that exists changes nothing, the server's keys included: the mode says so.
    const skipped = await alphaWriter.post(`/v1/transaction/${ownInsert}/alter`, { actions: [{ setPropertyAction: { key: 'operation', value: 'DropTable', mode: 'skip' } }] });
    expect([skipped.status, skipped.body.properties.operation]).toEqual([200, 'InsertTable']);
    // Properties a caller set are the caller's to change.
    expect((await alphaWriter.post(`/v1/transaction/${ownInsert}/alter`, { actions: [{ setPropertyAction: { key: 'note', value: 'checked' } }] })).status).toBe(200);
    const noted = await alphaWriter.post(`/v1/transaction/${ownInsert}/alter`, { actions: [{ unsetPropertyAction: { key: 'note' } }] });
    expect(noted.status).toBe(200);
    expect(noted.body.properties.operation).toBe('InsertTable');
    // Even the admin cannot rewrite the server's record; the record is as it was.
    expect((await alphaAdmin.post(`/v1/transaction/${expiry}/alter`, { actions: [{ setPropertyAction: { key: 'requested_by', value: 'request' } }] })).status).toBe(403);
    expect((await alphaAdmin.post(`/v1/transaction/${expiry}/describe`, {})).body).toEqual(before);
  });
});
