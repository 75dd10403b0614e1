import { CatalogError } from '@app/catalog';
import type { FastifyInstance } from 'fastify';
import { readBody, readOnAndDrop } from './body-reader';
import { parseJsonBody } from './json-body';
import { JsonShapeLimits, JsonShapeScan } from './json-shape-scan';
import type { BodyParser } from './untyped-body-parser';

export interface JsonBodyLimits extends JsonShapeLimits {
  /** JSON_BODY_LIMIT, never above BODY_LIMIT. */
  maxBytes: number;
  /** The setting named when a body is too large. */
  limitName: string;
}

/** A body past its limit: 413 code 13, the answer naming the setting. */
class JsonBodyTooLarge extends Error {
  readonly code = 'LANCE_JSON_BODY_TOO_LARGE';
  readonly statusCode = 413;
}

/**
 * Reads JSON bodies as they arrive: a Content-Length past the limit is refused before a byte is
 * read, and the bytes are counted and their nesting followed chunk by chunk (JsonShapeScan), so a
 * body that is too large or too wide is refused as soon as it shows it, and JSON.parse only ever
 * sees a body it can finish in a few milliseconds. An empty body, and the JSON literal `null` that
 * ListTableVersions sends, are both `{}` to the routes. Answers the parser, for bodies sent without
 * a content type (untyped-body-parser.ts).
 */
export function installJsonBodyParser(fastify: FastifyInstance, limits: JsonBodyLimits): BodyParser {
  const tooLarge = () => new JsonBodyTooLarge(`the JSON request body is larger than ${limits.maxBytes} bytes (${limits.limitName})`);
  const parse: BodyParser = (request, payload, done) => {
    const declared = Number(request.headers['content-length']);
    if (declared > limits.maxBytes) {
      readOnAndDrop(request, payload);
      return done(tooLarge(), undefined);
    }
    const scan = new JsonShapeScan(limits);
    const chunks: Buffer[] = [];
    let bytes = 0;
    readBody(request, payload, {
      chunk: (chunk) => {
        bytes += chunk.length;
        if (bytes > limits.maxBytes) throw tooLarge();
        scan.push(chunk);
        chunks.push(chunk);
      },
      end: () => {
        const text = Buffer.concat(chunks, bytes).toString('utf8').trim();
        if (text === '') return undefined;
        try {
          return parseJsonBody(text, { maxDepth: limits.maxDepth, maxArrayItems: limits.maxArrayItems });
        } catch (e) {
          if (e instanceof CatalogError) throw e;
          const err = e as Error & { statusCode?: number; code?: string };
          err.statusCode = 400;
          err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
          throw err;
        }
      },
    }, done);
  };
  fastify.addContentTypeParser('application/json', parse);
  return parse;
}
