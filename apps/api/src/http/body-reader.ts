import type { FastifyRequest } from 'fastify';
import { draining } from './error-filter';

/** What a body parser does with a body as it arrives (`readBody`). */
export interface BodyReading {
  /** Takes each chunk as it arrives; a throw refuses the body. */
  chunk(chunk: Buffer): void;
  /** The whole body has arrived: what the route gets, or a throw to refuse it. */
  end(): unknown;
  /** The body was refused or broke off: gives back what `chunk` took. */
  failed?(): void;
}

/**
 * Reads a body for a content-type parser, chunk by chunk into `reading`, then its end. A refused
 * body is read on and thrown away, so the caller, still sending, gets the answer; one that breaks
 * off (its caller gone, or too slow) is a malformed request (400), as Fastify's own reader has it,
 * not an internal error.
 */
export function readBody(request: FastifyRequest, payload: NodeJS.ReadableStream, reading: BodyReading, done: (error: Error | null, body?: unknown) => void): void {
  let finished = false;
  const finish = (error: Error | null, body?: unknown) => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    if (error) {
      reading.failed?.();
      readOnAndDrop(request, payload);
    }
    done(error, body);
  };
  const onData = (chunk: Buffer) => {
    if (finished) return;
    try {
      reading.chunk(chunk);
    } catch (e) {
      finish(e as Error);
    }
  };
  payload.on('data', onData);
  payload.once('error', (e: Error & { statusCode?: number }) => {
    if (!(typeof e.statusCode === 'number' && e.statusCode >= 400)) e.statusCode = 400;
    finish(e);
  });
  payload.once('end', () => {
    let body: unknown;
    try {
      body = reading.end();
    } catch (e) {
      return finish(e as Error);
    }
    finish(null, body);
  });
}

/** Reads a refused body on and throws it away: the caller, still sending, gets the answer rather than a reset connection. */
export function readOnAndDrop(request: FastifyRequest, payload: NodeJS.ReadableStream): void {
  draining.add(request.raw);
  payload.resume();
}
