import { AddressInfo } from 'node:net';
import { IncomingHttpHeaders, Server, createServer } from 'node:http';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver of webhooks: records every request it answers 2xx, and answers 500 to all
 * of a path while told to fail (those are counted, not recorded).
 */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Requests it refused while failing. */
  refused: number;
  /** Paths (or '*') answered 500. */
  failing: Set<string>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver = { received: [] as ReceivedWebhook[], refused: 0, failing: new Set<string>() };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (receiver.failing.has('*') || receiver.failing.has(path)) {
        receiver.refused++;
        res.writeHead(500).end('failing on purpose');
        return;
      }
      receiver.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get received() {
      return receiver.received;
    },
    get refused() {
      return receiver.refused;
    },
    failing: receiver.failing,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
