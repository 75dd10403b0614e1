import * as lancedb from '@lancedb/lancedb';
import * as arrow from 'apache-arrow';
import Fastify from 'fastify';
import { queryIpcFile } from '@app/lance';

/**
 * The baseline for catalog reads: the same Fastify, one route answering a fixed JSON object. The
 * transport floor for inserts: a route that receives an Arrow IPC stream and reads it. The
 * lancedb client's round trip with nothing behind it: ListNamespaces answering an empty list. And
 * the least a query server can do: a vector query on a table it keeps open, answered as the Arrow
 * IPC file Lance wrote, with no catalog, validation, auth or logging around it.
 */
async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  const body = { id: ['ns', 't1'], location: '/warehouse/default/ns/t1.lance', properties: {}, storage_options: {} };
  app.post('/v1/table/:id/describe', async () => body);
  app.get('/v1/namespace/:id/table/list', async () => body);
  app.get('/v1/namespace/:id/list', async () => ({ namespaces: [] }));
  app.addContentTypeParser('application/vnd.apache.arrow.stream', { parseAs: 'buffer', bodyLimit: 2 ** 30 }, (_req, b, done) => done(null, b));
  app.post('/arrow', async (req) => ({ num_rows: arrow.tableFromIPC(req.body as Buffer).numRows }));
  const opened = new Map<string, Promise<lancedb.Table>>();
  // `phase` names what a table is opened for: a handle kept from before an index was built
  // would search without it.
  const open = (root: string, name: string, phase = '') => {
    const key = `${root}\u0000${name}\u0000${phase}`;
    if (!opened.has(key)) opened.set(key, lancedb.connect(root).then((db) => db.openTable(name)));
    return opened.get(key)!;
  };
  app.post<{ Body: { root: string; table: string; vector: number[]; k: number; phase?: string } }>('/query', async (req, reply) => {
    const table = await open(req.body.root, req.body.table, req.body.phase);
    const file = await queryIpcFile(table.query().nearestTo(req.body.vector).limit(req.body.k));
    return reply.header('content-type', 'application/vnd.apache.arrow.file').send(Buffer.from(file.buffer, file.byteOffset, file.byteLength));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}`);
}

void main();
