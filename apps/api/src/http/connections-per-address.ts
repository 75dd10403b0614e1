import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long a refused connection may stay open once answered. */
const REFUSED_LINGER_MS = 1000;

/**
 * Caps the connections one client address holds open at once: requests are bounded per principal
 * and silent connections closed, but a client could still open connections that each send a
 * request now and then until the process ran out of descriptors for everyone. A connection past
 * the cap is answered 503 code 17 at once and closed, before any request of it is read.
 */
export function capConnectionsPerAddress(server: Server, max: number, onRefused?: () => void): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  const refusal = refusalOf(max);
  // Before Node's own listener: a refused connection is ended before its parser reads a byte.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const held = open.get(address) ?? 0;
    if (held >= max) {
      onRefused?.();
      socket.on('error', () => undefined);
      socket.end(refusal);
      socket.pause();
      // A client that never closes its side would hold the descriptor: it has had a second to read.
      const ending = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      socket.once('close', () => clearTimeout(ending));
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

function refusalOf(max: number): string {
  const body = JSON.stringify({
    error: `this address already holds ${max} open connections (CONNECTIONS_PER_ADDRESS): reuse them (keep-alive) or close some, then retry`,
    code: 17,
  });
  return [
    'HTTP/1.1 503 Service Unavailable',
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'retry-after: 1',
    'connection: close',
    '',
    body,
  ].join('\r\n');
}
