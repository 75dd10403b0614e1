import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { Observer, Refusal } from './observer';

/**
 * The lancedb client reports failures only as its own messages; this proxy between it and the
 * balancer lets the observer sort every answer the catalog gave it, by the same rules as the HTTP
 * drivers'. The refusals a Lance client meets in its protocol: 409 code 14 when its commit's version
 * was taken (a maintenance commit raced it), and 404 code 11 when it asks whether a version it tried
 * to commit exists and it does not.
 */
const REFUSALS: Array<[RegExp, Refusal]> = [
  [/\/version\/create$/, { status: 409, code: 14 }],
  [/\/version\/describe$/, { status: 404, code: 11 }],
];

export interface ObservingProxy {
  url: string;
  /** When the last answer "unavailable" came, and what came after it. */
  lastUnavailableAt: number;
  close(): Promise<void>;
}

export async function observingProxy(target: string, obs: Observer, driver: string): Promise<ObservingProxy> {
  const proxy: ObservingProxy = { url: '', lastUnavailableAt: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => void forward(req, res));
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    const path = (req.url ?? '/').split('?')[0];
    const what = `lancedb ${path.replace(/^\/v1\/table\/[^/]+/, 'table')}`;
    try {
      const answer = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const body = Buffer.from(await answer.arrayBuffer());
      let parsed: unknown = body.toString('utf8');
      try {
        parsed = JSON.parse(parsed as string);
      } catch {
        // not JSON: kept as text
      }
      const refusals = REFUSALS.filter(([p]) => p.test(path)).map(([, r]) => r);
      const outcome = obs.answer(`${driver}:http`, what, { status: answer.status, body: parsed, headers: answer.headers }, refusals, startedAt);
      if (outcome === 'unavailable') proxy.lastUnavailableAt = Date.now();
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (!['content-encoding', 'transfer-encoding', 'connection', 'content-length'].includes(k)) out[k] = v;
      });
      res.writeHead(answer.status, out).end(body);
    } catch (e) {
      obs.noAnswer(`${driver}:http`, what, e, startedAt);
      res.destroy();
    }
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.close = () => new Promise((r) => server.close(() => r()));
  return proxy;
}
