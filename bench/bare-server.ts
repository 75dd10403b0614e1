import * as arrow from 'apache-arrow';
import Fastify from 'fastify';

/**
 * The baseline for catalog reads: the same Fastify, one route answering a fixed JSON object. The
 * transport floor for inserts: a route that receives an Arrow IPC stream and reads it. And the
 * lancedb client's round trip with nothing behind it: ListNamespaces answering an empty list.
 */
async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  const body = { id: ['ns', 't1'], location: '/warehouse/default/ns/t1.lance', properties: {}, storage_options: {} };
  app.post('/v1/table/:id/describe', async () => body);
  app.get('/v1/namespace/:id/table/list', async () => body);
  app.get('/v1/namespace/:id/list', async () => ({ namespaces: [] }));
  app.addContentTypeParser('application/vnd.apache.arrow.stream', { parseAs: 'buffer', bodyLimit: 2 ** 30 }, (_req, b, done) => done(null, b));
  app.post('/arrow', async (req) => ({ num_rows: arrow.tableFromIPC(req.body as Buffer).numRows }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}`);
}

void main();
