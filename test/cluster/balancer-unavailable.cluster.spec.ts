import { createServer } from 'node:net';
import { Api } from '../support/http';
import { RunningBalancer, freePort, startNginx } from '../support/nginx';

/**
 * nginx configured as deploy/nginx.conf, in front of replicas that cannot answer: one that is gone
 * (nothing listens on its port) and one that drops the connection mid-request (what a replica
 * killed while it handles a write does). Clients get the API's "unavailable, retry" answer, not
 * the balancer's HTML error page.
 */
describe('the balancer when no replica can answer', () => {
  let lb: RunningBalancer;
  let dropper: ReturnType<typeof createServer>;
  let ready = false;

  beforeAll(async () => {
    // It answers /healthz (nginx's start-up probe) and then drops every connection unanswered.
    dropper = createServer((socket) => {
      socket.once('data', () => {
        if (ready) socket.destroy();
        else socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
      });
    });
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', () => r()));
    const gone = await freePort();
    lb = await startNginx([`http://127.0.0.1:${(dropper.address() as { port: number }).port}`, `http://127.0.0.1:${gone}`]);
    ready = true;
  });

  afterAll(async () => {
    await lb?.stop();
    await new Promise((r) => dropper?.close(r));
  });

  it('answers 503 code 17 with Retry-After in JSON, for reads and for writes', async () => {
    const api = new Api(lb.url);
    for (let i = 0; i < 4; i++) {
      for (const reply of [await api.post('/v1/table/a%24b/version/create', { version: 1, manifest_path: 'x' }), await api.get('/v1/namespace/a/table/list')]) {
        expect({ status: reply.status, code: reply.body?.code, retryAfter: reply.headers.get('retry-after'), type: reply.headers.get('content-type') }).toEqual({
          status: 503,
          code: 17,
          retryAfter: expect.stringMatching(/^\d+$/),
          type: expect.stringContaining('application/json'),
        });
        expect(reply.body.error).toEqual(expect.any(String));
      }
    }
  });
});
