import Fastify from 'fastify';

/** The baseline for catalog reads: the same Fastify, one route answering a fixed JSON object. */
async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  const body = { id: ['ns', 't1'], location: '/warehouse/default/ns/t1.lance', properties: {}, storage_options: {} };
  app.post('/v1/table/:id/describe', async () => body);
  app.get('/v1/namespace/:id/table/list', async () => body);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}`);
}

void main();
