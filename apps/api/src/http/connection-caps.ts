import type { Server } from 'node:http';
import { isIPv6, type Socket } from 'node:net';
import { rawJsonAnswer } from './raw-answer';

/** How long a refused connection may stay open once answered. */
const REFUSED_LINGER_MS = 1000;

/**
 * Caps the connections one client address holds open at once, and all of them together: requests
 * are bounded per principal and silent connections closed, but a client could still open
 * connections that each send a request now and then until the process ran out of descriptors for
 * everyone (and for its own files: the event store's, Lance's). A connection past a cap is
 * answered 503 code 17 at once and closed; it never reaches the HTTP server, so nothing it sends is
 * parsed or run. An IPv6 client is counted by its /64, the block one host is given.
 *
 * Installed after every other listener of `connection` (Node's own HTTP parser's among them): those
 * are taken off the server and called only for the connections let in.
 */
export function capConnections(server: Server, caps: { perAddress: number; total: number }, onRefused?: () => void): void {
  const perAddress = caps.perAddress > 0 ? caps.perAddress : Infinity;
  const total = caps.total > 0 ? caps.total : Infinity;
  if (perAddress === Infinity && total === Infinity) return;
  const open = new Map<string, number>();
  let all = 0;
  const refusals = {
    address: refusalOf(`this address already holds ${caps.perAddress} open connections (CONNECTIONS_PER_ADDRESS): reuse them (keep-alive) or close some, then retry`),
    total: refusalOf(`the server already holds ${caps.total} open connections (CONNECTIONS_MAX): retry shortly`),
  };
  const admitted = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const client = clientOf(socket.remoteAddress ?? '');
    const held = open.get(client) ?? 0;
    if (held >= perAddress || all >= total) {
      onRefused?.();
      refuse(socket, held >= perAddress ? refusals.address : refusals.total);
      return;
    }
    open.set(client, held + 1);
    all++;
    socket.once('close', () => {
      all--;
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else open.delete(client);
    });
    for (const listener of admitted) listener.call(server, socket);
  });
}

/** Answers and ends a connection no parser reads: what it sends is read and dropped, so its close is not a reset that loses the answer. */
function refuse(socket: Socket, refusal: string): void {
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  socket.end(refusal);
  // A client that never closes its side would hold the descriptor: it has had a second to read.
  const ending = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
  socket.once('close', () => clearTimeout(ending));
}

/** Whom a connection counts against: its IPv4 address, or the /64 of its IPv6 address. */
export function clientOf(address: string): string {
  if (!isIPv6(address) || address.toLowerCase().startsWith('::ffff:')) return address;
  const [head, tail = ''] = address.split('::');
  const first = head ? head.split(':') : [];
  const last = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...first, ...Array<string>(8 - first.length - last.length).fill('0'), ...last] : first;
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

function refusalOf(error: string): string {
  return rawJsonAnswer(503, { error, code: 17 }, { 'Retry-After': '1' });
}
