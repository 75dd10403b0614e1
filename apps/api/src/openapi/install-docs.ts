import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { OpenApiDocument } from './served-document';

/** A browsable page over the served document at `prefix`. */
export async function installDocs(fastify: FastifyInstance, prefix: string, document: OpenApiDocument): Promise<void> {
  await fastify.register(swagger, { mode: 'static', specification: { document: document as never } });
  await fastify.register(swaggerUi, { routePrefix: prefix, uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: false } });
}
