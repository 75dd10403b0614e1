import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Socket, connect } from 'node:net';
import { Api } from '../support/http';
import { RunningServer, startServer } from '../support/server';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
const KEYS = { hog: 'hog-key-0123456789abcdef', other: 'other-key-0123456789abcdef' };

/**
 * A request whose body never finishes arriving: headers, then the first bytes of a longer body.
 * Without a key its credential could only be the body's `identity`.
 */
function heldOpen(url: string, key?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/namespace/n/describe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '4000', ...(key ? { 'x-api-key': key } : {}) },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.write('{"identity":');
  });
}

/**
 * One principal cannot hold every connection: its requests in flight are bounded
 * (REQUESTS_IN_FLIGHT_PER_PRINCIPAL), and a request whose body crawls in ends at REQUEST_TIMEOUT_MS.
 */
describe('requests in flight per principal, and the time a request may take to arrive', () => {
  let server: RunningServer;
  const as = (key: string) => new Api(server.url, { 'x-api-key': key });

  beforeAll(async () => {
    server = await startServer({
      entry: 'api',
      env: {
        AUTH_API_KEYS: JSON.stringify([
          { principal: 'hog', sha256: sha256(KEYS.hog), databases: ['default'], level: 'read' },
          { principal: 'other', sha256: sha256(KEYS.other), databases: ['default'], level: 'admin' },
        ]),
        REQUESTS_IN_FLIGHT_PER_PRINCIPAL: '3',
        REQUEST_TIMEOUT_MS: '2000',
        FIRST_REQUEST_WAIT_MS: '1000',
        CONNECTIONS_PER_ADDRESS: '24',
        CONNECTIONS_MAX: '40',
      },
    });
    expect((await as(KEYS.other).post('/v1/namespace/n/create', {})).status).toBe(200);
  });
  afterAll(() => server?.stop());

  it('refuses a principal past its requests in flight while others are served, and ends bodies that do not arrive', async () => {
    const started = Date.now();
    const held = [heldOpen(server.url, KEYS.hog), heldOpen(server.url, KEYS.hog), heldOpen(server.url, KEYS.hog)];
    await new Promise((r) => setTimeout(r, 300));
    const refused = await as(KEYS.hog).post('/v1/namespace/n/describe', {});
    expect([refused.status, refused.body.code, refused.headers.get('retry-after')]).toEqual([429, 21, '1']);
    expect(refused.body.error).toContain('hog already has 3 requests in flight');
    // Refused with its body still to come, the connection is closed after the answer: uncounted, it would hold on.
    const closedAt = await new Promise<{ status: number; ms: number }>((resolve, reject) => {
      const sent = Date.now();
      let status = 0;
      const req = httpRequest(`${server.url}/v1/namespace/n/describe`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100000', 'x-api-key': KEYS.hog } });
      req.on('response', (res) => {
        status = res.statusCode!;
        res.resume();
      });
      req.on('close', () => resolve({ status, ms: Date.now() - sent }));
      req.on('error', () => resolve({ status, ms: Date.now() - sent }));
      req.write('{"a":');
      setTimeout(() => reject(new Error('the refused connection stayed open')), 5000).unref();
    });
    expect(closedAt.status).toBe(429);
    expect(closedAt.ms).toBeLessThan(1500);
    expect((await as(KEYS.other).post('/v1/namespace/n/describe', {})).status).toBe(200);
    // The held requests end at the timeout, answered 408 code 13; the principal is served again.
    for (const answer of await Promise.all(held)) {
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body).code).toBe(13);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await as(KEYS.hog).post('/v1/namespace/n/describe', {})).status).toBe(200);
  });

  it('closes a connection that sends no request within FIRST_REQUEST_WAIT_MS, and keeps one that does', async () => {
    const port = Number(new URL(server.url).port);
    const open = (send?: string) => {
      const socket = connect(port, '127.0.0.1', () => send && socket.write(send));
      socket.on('data', () => undefined);
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - opened)));
      const opened = Date.now();
      return { socket, closed };
    };
    const silent = open();
    // A keep-alive connection that asked once lives on past the wait (Node's keep-alive closes it later).
    const served = open('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    try {
      expect(await silent.closed).toBeGreaterThanOrEqual(900);
      await new Promise((r) => setTimeout(r, 500));
      expect(served.socket.destroyed).toBe(false);
    } finally {
      served.socket.destroy();
    }
  });

  it('answers a connection past CONNECTIONS_PER_ADDRESS 503 code 17 and closes it, while other addresses are served', async () => {
    const port = Number(new URL(server.url).port);
    // Each asks once and stays open (keep-alive): what a client holding connections does.
    const ask = (localAddress = '127.0.0.1', request = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n') =>
      new Promise<{ socket: Socket; answer: string }>((resolve) => {
        const socket = connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(request));
        let answer = '';
        socket.on('error', () => undefined);
        socket.on('data', (d) => {
          answer += d;
          if (/\r\n\r\n[\s\S]*\}/.test(answer)) resolve({ socket, answer });
        });
        socket.on('close', () => resolve({ socket, answer }));
      });
    const held = await Promise.all(Array.from({ length: 30 }, () => ask()));
    try {
      const refused = held.filter((h) => h.answer.startsWith('HTTP/1.1 503'));
      const served = held.filter((h) => h.answer.startsWith('HTTP/1.1 200'));
      // The test's own client holds a few connections from this address already.
      expect(refused.length).toBeGreaterThanOrEqual(6);
      expect(refused.length + served.length).toBe(30);
      const body = JSON.parse(refused[0].answer.slice(refused[0].answer.indexOf('\r\n\r\n') + 4));
      expect(body).toEqual({ code: 17, error: expect.stringContaining('already holds 24 open connections (CONNECTIONS_PER_ADDRESS)') });
      expect(refused[0].answer).toMatch(/retry-after: 1/i);
      await new Promise((r) => setTimeout(r, 200));
      expect(refused.every((h) => h.socket.destroyed || h.socket.readableEnded)).toBe(true);
      expect(served.every((h) => !h.socket.destroyed)).toBe(true);
      // What a refused connection sends is not run: three creates written at once, none made.
      const creates = ['a', 'b', 'c'].map((n) => `POST /v1/namespace/smuggled-${n}/create HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEYS.other}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`).join('');
      const smuggled = await ask('127.0.0.1', creates);
      expect(smuggled.answer).toMatch(/^HTTP\/1\.1 503/);
      // Another address is served meanwhile, up to CONNECTIONS_MAX for all of them together.
      const elsewhere = await Promise.all(Array.from({ length: 20 }, () => ask('127.0.0.2')));
      try {
        const answers = elsewhere.map((h) => /^HTTP\/1\.1 (\d+)/.exec(h.answer)?.[1]);
        const admitted = answers.filter((a) => a === '200').length;
        expect(admitted + answers.filter((a) => a === '503').length).toBe(20);
        // 127.0.0.1 holds 24, of them this test's own served ones, still open.
        expect(admitted).toBeGreaterThanOrEqual(40 - 24);
        expect(admitted).toBeLessThanOrEqual(40 - served.length);
        const past = elsewhere.find((h) => h.answer.startsWith('HTTP/1.1 503'));
        expect(past && JSON.parse(past.answer.slice(past.answer.indexOf('\r\n\r\n') + 4))).toEqual({ code: 17, error: 'the server already holds 40 open connections (CONNECTIONS_MAX): retry shortly' });
      } finally {
        for (const h of elsewhere) h.socket.destroy();
      }
    } finally {
      for (const h of held) h.socket.destroy();
    }
    // Closed, they give their places back.
    await new Promise((r) => setTimeout(r, 200));
    const again = await ask();
    again.socket.destroy();
    expect(again.answer).toMatch(/^HTTP\/1\.1 200/);
    for (const n of ['a', 'b', 'c']) expect((await as(KEYS.other).post(`/v1/namespace/smuggled-${n}/describe`, {})).status).toBe(404);
    const metrics = await as(KEYS.other).get('/metrics');
    expect(Number(/lance_catalog_connections_refused_total (\d+)/.exec(metrics.text)?.[1])).toBeGreaterThanOrEqual(6);
  });

  it('ends a refused body still arriving at REQUEST_TIMEOUT_MS: its connection is not held once answered', async () => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(`POST /v1/namespace/n/describe HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEYS.other}\r\ncontent-type: application/json\r\ncontent-length: 1000000000000\r\n\r\n{`);
    const trickle = setInterval(() => socket.writable && socket.write(' '), 200);
    try {
      await closed;
    } finally {
      clearInterval(trickle);
    }
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
  });

  it('counts requests whose credential is only in their body by the address they come from, before their body is read', async () => {
    const held = [heldOpen(server.url), heldOpen(server.url), heldOpen(server.url)];
    await new Promise((r) => setTimeout(r, 300));
    const anonymous = new Api(server.url);
    const refused = await anonymous.post('/v1/namespace/n/describe', { identity: { api_key: KEYS.other } });
    expect([refused.status, refused.body.code, refused.headers.get('retry-after')]).toEqual([429, 21, '1']);
    expect(refused.body.error).toContain('the address 127.0.0.1 already has 3 requests whose credential is in their body in flight');
    // A caller naming its key in a header is its own principal's count, not the address's.
    expect((await as(KEYS.other).post('/v1/namespace/n/describe', {})).status).toBe(200);
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(408);
    expect((await anonymous.post('/v1/namespace/n/describe', { identity: { api_key: KEYS.other } })).status).toBe(200);
  });
});
