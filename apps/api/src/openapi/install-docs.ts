import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { OpenApiDocument, loadProtocolSpec, servedDocument } from './served-document';

const INTERNAL = [/^\/docs(\/|$)/, /^\/admin\//, /^\*$/];

/**
 * `/openapi.json` (what this server serves) and a browsable page at `/docs`. Routes are collected
 * as Nest registers them and the document is filled in once they all exist.
 */
export async function installDocs(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const routes: { method: string; url: string }[] = [];
  fastify.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (INTERNAL.some((r) => r.test(url))) return;
    for (const method of [route.method].flat()) if (method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, url });
  });
  const spec = loadProtocolSpec();
  // @fastify/swagger keeps this object and reads it on the first request, after onReady filled it.
  const document = { openapi: spec.openapi, info: spec.info, paths: {} } as OpenApiDocument;
  fastify.addHook('onReady', async () => {
    Object.assign(document, servedDocument(spec, routes));
  });
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: false } });
  fastify.get('/openapi.json', async () => document);
}
