import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readOnAndDrop } from './body-reader';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's body is an Arrow IPC stream (InsertIntoTable, CreateTable, MergeInsertIntoTable...). */
    arrowBody?: boolean;
  }
}

export type BodyParser = (request: FastifyRequest, payload: FastifyRequest['raw'], done: (err: Error | null, body?: unknown) => void) => void;

/** A content type no route reads: 415 code 13, as Fastify answers it (error-filter.ts). */
class UnsupportedMediaType extends Error {
  readonly code = 'FST_ERR_CTP_INVALID_MEDIA_TYPE';
  readonly statusCode = 415;
}

/**
 * A body sent without a content type is read as the route reads its bodies: Lance's own REST
 * namespace client posts CreateTable, InsertIntoTable and MergeInsertIntoTable's Arrow IPC streams
 * with no `Content-Type`, and its JSON calls may come the same way. Any other content type a route
 * does not read is refused, the body read on and thrown away so the caller, still sending, gets the
 * answer.
 */
export function installUntypedBodyParser(fastify: FastifyInstance, parsers: { json: BodyParser; arrow: BodyParser }): void {
  fastify.addContentTypeParser('*', (request, payload, done) => {
    // No route: left unread, so the answer is the one for an operation this server does not serve.
    if (request.is404) return done(null, undefined);
    if (request.headers['content-type'] === undefined) {
      return (request.routeOptions.config.arrowBody ? parsers.arrow : parsers.json)(request, payload, done);
    }
    readOnAndDrop(request, payload);
    const reads = request.routeOptions.config.arrowBody ? 'application/vnd.apache.arrow.stream' : 'application/json';
    done(new UnsupportedMediaType(`'${request.headers['content-type']}'; this route reads ${reads}`), undefined);
  });
}
