import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes a connection that sends no request: Node times out a request's headers once they have
 * begun (`headersTimeout`) and an idle connection after an answer (keep-alive), but a connection
 * that never sends a byte was held for good, and one client could take every descriptor.
 */
export function closeSilentConnections(server: Server, ms: number): void {
  server.on('connection', (socket: Socket) => {
    socket.setTimeout(ms, () => socket.destroy());
  });
  // From its first request on, the connection's life is Node's and the request's own limits'.
  server.on('request', (request: { socket: Socket }) => request.socket.setTimeout(0));
}
