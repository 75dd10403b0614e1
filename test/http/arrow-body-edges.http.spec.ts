import { connect } from 'node:net';
import { Api } from '../support/http';
import { ARROW_STREAM, arrowStream, sampleTable } from '../support/arrow-data';
import { RunningServer, startServer } from '../support/server';

const MiB = 1024 * 1024;

/** Writes `head` and `body` on a connection of its own, then ends it as `how` says; resolves with what came back. */
function rawRequest(port: number, head: string, body: Buffer, how: { destroyAfterMs?: number; halfClose?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      socket.write(body);
      if (how.halfClose) socket.end();
      if (how.destroyAfterMs !== undefined) setTimeout(() => socket.destroy(), how.destroyAfterMs);
    });
    socket.on('data', (d) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
  });
}

const arrowHead = (path: string, headers: string) => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/vnd.apache.arrow.stream\r\n${headers}\r\n`;

/**
 * Arrow bodies that go wrong on the way in (apps/api/src/http/arrow-body-parser.ts): each is
 * answered in the protocol's terms, none costs the server more than its own request, and the next
 * body is served whole.
 */
describe('Arrow (and JSON) bodies that go wrong on the way in', () => {
  let server: RunningServer;
  let api: Api;
  let port: number;

  beforeAll(async () => {
    server = await startServer({ entry: 'api', env: { BODY_LIMIT: String(8 * MiB), DATA_PLANE_PROCESSES: '0' } });
    api = new Api(server.url);
    port = Number(new URL(server.url).port);
    await api.post('/v1/namespace/e/create', {});
    const created = await api.send('POST', `/v1/table/e%24t/create`, arrowStream(sampleTable(0, 10, 64)), ARROW_STREAM);
    expect(created.status).toBe(200);
  });
  afterAll(() => server?.stop());

  async function insertsWhole(from: number, count: number): Promise<void> {
    const before = (await api.post(`/v1/table/e%24t/count_rows`, {})).body as number;
    const next = await api.send<any>('POST', `/v1/table/e%24t/insert`, arrowStream(sampleTable(from, count, 64)), ARROW_STREAM);
    expect([next.status, next.body.num_inserted_rows]).toEqual([200, count]);
    expect((await api.post(`/v1/table/e%24t/count_rows`, {})).body).toBe(before + count);
    expect((await api.post(`/v1/table/e%24t/count_rows`, { predicate: `id >= ${from} AND id < ${from + count}` })).body).toBe(count);
  }

  it('takes a caller leaving mid-body, with a length or chunked, as a malformed body of its own, not an internal error', async () => {
    const part = Buffer.alloc(200 * 1024, 3);
    // A length large enough for a kept buffer, half of it sent; then chunked, part of one chunk sent.
    await rawRequest(port, arrowHead('/v1/table/e%24t/insert', `Content-Length: ${MiB}\r\n`), part, { destroyAfterMs: 200 });
    await rawRequest(port, arrowHead('/v1/table/e%24t/insert', 'Transfer-Encoding: chunked\r\n'), Buffer.concat([Buffer.from('40000\r\n'), part.subarray(0, 100 * 1024)]), { destroyAfterMs: 200 });
    // A JSON body the same way: its reader is the same.
    const jsonHead = `POST /v1/namespace/e/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    await rawRequest(port, jsonHead, Buffer.from('{"properties": {"k": "' + 'v'.repeat(50_000)), { destroyAfterMs: 200 });
    const output = await server.outputMatching(/Error: aborted/, 1_500);
    expect(output).not.toMatch(/"level":50[^\n]*Error: aborted/);
    await insertsWhole(100_000, 3_000);
  });

  it('answers a body shorter than its Content-Length with 400 code 13, and serves the next body', async () => {
    const answer = await rawRequest(port, arrowHead('/v1/table/e%24t/insert', `Content-Length: ${MiB}\r\n`), Buffer.alloc(300 * 1024, 5), { halfClose: true });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).code).toBe(13);
    await insertsWhole(200_000, 3_000);
  });

  it('refuses a Content-Length beside chunked encoding, and an empty body, with 400 code 13', async () => {
    const both = await rawRequest(port, arrowHead('/v1/table/e%24t/insert', 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n'), Buffer.from('5\r\nhello\r\n0\r\n\r\n'));
    expect(both.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    const empty = await api.send<any>('POST', `/v1/table/e%24t/insert`, Buffer.alloc(0), ARROW_STREAM);
    expect([empty.status, empty.body.code]).toEqual([400, 13]);
  });

  it('survives a caller leaving while a refused body is drained, and one sending an Arrow body to a JSON route or to no route', async () => {
    await rawRequest(port, arrowHead('/v1/table/e%24t/insert', `Content-Length: ${9 * MiB}\r\n`), Buffer.alloc(MiB, 1), { destroyAfterMs: 300 });
    const json = await api.send<any>('POST', `/v1/table/e%24t/count_rows`, Buffer.alloc(300 * 1024, 2), ARROW_STREAM);
    expect([json.status, json.body.code]).toEqual([400, 13]);
    const nowhere = await api.send<any>('POST', `/v1/no-such-route`, Buffer.alloc(300 * 1024, 2), ARROW_STREAM);
    expect(nowhere.body.code).toBe(0);
    await insertsWhole(300_000, 3_000);
  });
});
