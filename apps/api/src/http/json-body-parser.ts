import { CatalogError } from '@app/catalog';
import type { FastifyInstance } from 'fastify';
import { draining } from './error-filter';
import { parseJsonBody } from './json-body';
import { JsonShapeLimits, JsonShapeScan } from './json-shape-scan';

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
 * ListTableVersions sends, are both `{}` to the routes.
 */
export function installJsonBodyParser(fastify: FastifyInstance, limits: JsonBodyLimits): void {
  const tooLarge = () => new JsonBodyTooLarge(`the JSON request body is larger than ${limits.maxBytes} bytes (${limits.limitName})`);
  fastify.addContentTypeParser('application/json', (request, payload, done) => {
    const declared = Number(request.headers['content-length']);
    if (declared > limits.maxBytes) {
      // Read on and thrown away unparsed, so the caller, still sending, gets the answer rather than a reset connection.
      drain(request.raw, payload);
      return done(tooLarge(), undefined);
    }
    const scan = new JsonShapeScan(limits);
    const chunks: Buffer[] = [];
    let bytes = 0;
    let finished = false;
    const finish = (error: Error | null, body?: unknown) => {
      if (finished) return;
      finished = true;
      payload.removeListener('data', onData);
      if (error) drain(request.raw, payload);
      done(error, body);
    };
    const onData = (chunk: Buffer) => {
      if (finished) return;
      bytes += chunk.length;
      if (bytes > limits.maxBytes) return finish(tooLarge());
      try {
        scan.push(chunk);
      } catch (e) {
        return finish(e as Error);
      }
      chunks.push(chunk);
    };
    payload.on('data', onData);
    payload.once('error', (e) => finish(e));
    payload.once('end', () => {
      const text = Buffer.concat(chunks, bytes).toString('utf8').trim();
      if (text === '') return finish(null, undefined);
      try {
        finish(null, parseJsonBody(text, { maxDepth: limits.maxDepth, maxArrayItems: limits.maxArrayItems }));
      } catch (e) {
        if (e instanceof CatalogError) return finish(e);
        const err = e as Error & { statusCode?: number; code?: string };
        err.statusCode = 400;
        err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
        finish(err);
      }
    });
  });
}

function drain(raw: object, payload: NodeJS.ReadableStream): void {
  draining.add(raw);
  payload.resume();
}
