import { Server, Socket, createConnection, createServer } from 'node:net';

/**
 * A TCP proxy in front of a service, for outages: `cut` closes the port and every connection
 * through it (as a network partition or a stopped server would), `restore` opens it again on the
 * same port. The service itself, shared by every test on this machine, is never touched.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const open = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = createConnection({ port: targetPort, host: targetHost });
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream);
        upstream.pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  server = await open(0);
  const port = (server.address() as { port: number }).port;
  const cut = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise((r) => closing.close(r));
  };
  return {
    port,
    cut,
    restore: async () => {
      if (!server) server = await open(port);
    },
    close: cut,
  };
}
