import { createHash } from 'node:crypto';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const ADMIN_KEY = 'console-http-admin-0123456789';
const READER_KEY = 'console-http-reader-0123456789';
const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');

interface Feed {
  events: { event: string; id?: string; data: any }[];
  close(): void;
  until(count: number, ms?: number): Promise<void>;
}

/** Reads /v1/history/live as a browser's fetch would, parsing the server-sent events. */
async function openFeed(url: string, headers: Record<string, string>): Promise<Feed> {
  const abort = new AbortController();
  const res = await fetch(`${url}/v1/history/live`, { headers, signal: abort.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  expect(res.headers.get('x-accel-buffering')).toBe('no');
  const events: Feed['events'] = [];
  let buffer = '';
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(block.split('\n').filter((l) => l && !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
          if (fields.event) events.push({ event: fields.event, id: fields.id, data: JSON.parse(fields.data) });
        }
      }
    } catch {
      // closed by the test
    }
  })();
  return {
    events,
    close: () => abort.abort(),
    async until(count, ms = 10_000) {
      const end = Date.now() + ms;
      while (events.length < count) {
        if (Date.now() > end) throw new Error(`only ${events.length} of ${count} events arrived: ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

describe('the routes the console reads besides the REST binding', () => {
  let server: RunningServer;
  let admin: Api;
  let reader: Api;

  beforeAll(async () => {
    server = await startServer({
      env: {
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'ops', sha256: sha256(ADMIN_KEY), databases: ['*'], level: 'admin' },
          { principal: 'viewer', sha256: sha256(READER_KEY), databases: ['default', 'other'], level: 'read' },
        ]),
      },
    });
    admin = new Api(server.url, { 'x-api-key': ADMIN_KEY });
    reader = new Api(server.url, { 'x-api-key': READER_KEY });
    for (let i = 0; i < 30; i++) expect((await admin.post(`/v1/namespace/n${i}/create`, {})).status).toBe(200);
  });
  afterAll(() => server?.stop());

  it('GET /v1/whoami tells the principal, its grants and its level in the database asked about', async () => {
    expect((await new Api(server.url).get('/v1/whoami')).status).toBe(401);
    const me = await reader.get('/v1/whoami');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      principal: 'viewer',
      via: 'api-key',
      authentication: true,
      database: 'default',
      level: 'read',
      default_database: 'default',
      grants: [
        { database: 'default', level: 'read' },
        { database: 'other', level: 'read' },
      ],
      roles: [],
      by_grants: false,
    });
    expect((await reader.get('/v1/whoami', { 'x-lance-database': 'elsewhere' })).body.level).toBeNull();
    expect((await admin.get('/v1/whoami', { 'x-lance-database': 'elsewhere' })).body).toMatchObject({ principal: 'ops', database: 'elsewhere', level: 'admin' });
    const bad = await admin.get('/v1/whoami', { 'x-lance-database': '../x' });
    expect([bad.status, bad.body.code]).toEqual([400, 13]);
  });

  it('GET /v1/history/database reads any window of the whole log, newest by default', async () => {
    const newest = await reader.get('/v1/history/database?limit=10');
    expect(newest.status).toBe(200);
    expect(newest.body.head).toBe(29);
    expect(newest.body.events.map((e: { revision: number }) => e.revision)).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    expect(newest.body.events[9]).toMatchObject({ type: 'NamespaceCreated', operation: 'CreateNamespace', principal: 'ops', data: { namespace: ['n29'] } });
    expect(newest.body.before).toBe(20);
    const older = await reader.get(`/v1/history/database?limit=15&before=${newest.body.before}`);
    expect(older.body.events.map((e: { revision: number }) => e.revision)).toEqual(Array.from({ length: 15 }, (_, i) => 5 + i));
    const first = await reader.get('/v1/history/database?limit=15&before=5');
    expect(first.body).toMatchObject({ before: null, head: 29 });
    expect(first.body.events).toHaveLength(5);
    expect((await reader.get('/v1/history/database?limit=1001')).status).toBe(400);
    expect((await reader.get('/v1/history/database?before=-3')).status).toBe(400);
    expect((await reader.get('/v1/history/database', { 'x-lance-database': 'elsewhere' })).status).toBe(403);
    expect((await reader.get('/v1/history/database', { 'x-lance-database': 'other' })).body).toEqual({ events: [], head: -1, before: null });
  });

  it('GET /v1/history/live streams new events, resumes after Last-Event-ID, and needs read on the database', async () => {
    expect((await new Api(server.url).get('/v1/history/live')).status).toBe(401);
    expect((await reader.get('/v1/history/live', { 'x-lance-database': 'elsewhere' })).status).toBe(403);
    expect((await reader.get('/v1/history/live?after=abc')).status).toBe(400);
    const feed = await openFeed(server.url, { 'x-api-key': READER_KEY });
    await feed.until(1);
    expect(feed.events[0]).toEqual({ event: 'head', id: undefined, data: { database: 'default', revision: 29 } });
    await admin.post('/v1/namespace/live1/create', {});
    await admin.post('/v1/namespace/live2/create', {});
    await feed.until(3);
    expect(feed.events.slice(1).map((e) => [e.event, e.id, e.data.data.namespace[0], e.data.principal])).toEqual([
      ['catalog', '30', 'live1', 'ops'],
      ['catalog', '31', 'live2', 'ops'],
    ]);
    feed.close();
    // A reconnect names the last event it saw and gets what came after, from the log.
    await admin.post('/v1/namespace/live3/create', {});
    const resumed = await openFeed(server.url, { 'x-api-key': READER_KEY, 'last-event-id': '30' });
    await resumed.until(3);
    expect(resumed.events.slice(1).map((e) => e.data.revision)).toEqual([31, 32]);
    resumed.close();
    const replay = await openFeed(server.url, { 'x-api-key': READER_KEY, 'last-event-id': '-1' });
    await replay.until(34);
    expect(replay.events.slice(1).map((e) => e.data.revision)).toEqual(Array.from({ length: 33 }, (_, i) => i));
    replay.close();
    // A revision past the head (a Last-Event-ID kept across a restore of the store) would be waited for in silence.
    const ahead = await reader.get('/v1/history/live?after=99999999');
    expect([ahead.status, ahead.body.code]).toEqual([400, 13]);
    expect(ahead.body.error).toContain('past the head of the log, revision 32');
    const aheadById = await reader.get('/v1/history/live', { 'last-event-id': '33' });
    expect([aheadById.status, aheadById.body.code]).toEqual([400, 13]);
    const atHead = await openFeed(server.url, { 'x-api-key': READER_KEY, 'last-event-id': '32' });
    await admin.post('/v1/namespace/live4/create', {});
    await atHead.until(2);
    expect(atHead.events[1].data.revision).toBe(33);
    atHead.close();
  });

  it('stops promptly on SIGTERM with a feed open', async () => {
    const own = await startServer();
    const feed = await openFeed(own.url, {});
    await feed.until(1);
    const started = Date.now();
    await own.stop();
    expect(Date.now() - started).toBeLessThan(10_000);
    feed.close();
  });
});
