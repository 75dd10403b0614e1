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

/** REQUEST_TIMEOUT_MS: how long a request may take to arrive, counted from its arrival; 0: no limit. */
let arrivalLimitMs = 0;

export function limitBodyArrival(ms: number): void {
  arrivalLimitMs = ms;
}

/** A body still arriving at REQUEST_TIMEOUT_MS: 408 code 13, and the connection closed after the answer. */
export class BodyTimeout extends Error {
  readonly code = 'LANCE_BODY_TIMEOUT';
  readonly statusCode = 408;
  readonly closeConnection = true;
}

/**
 * Reads a body for a content-type parser, chunk by chunk into `reading`, then its end. A refused
 * body is read on and thrown away, so the caller, still sending, gets the answer; one that breaks
 * off (its caller gone) is a malformed request (400), as Fastify's own reader has it, not an
 * internal error. One still arriving REQUEST_TIMEOUT_MS after its request came is cut off: a body
 * sent a byte at a time would otherwise hold its connection, and a principal's place among the
 * requests in flight, for as long as its sender likes.
 */
export function readBody(request: FastifyRequest, payload: NodeJS.ReadableStream, reading: BodyReading, done: (error: Error | null, body?: unknown) => void): void {
  let finished = false;
  const left = arrivalLimitMs > 0 ? arrivalLimitMs - (performance.now() - (request.arrivedAt ?? performance.now())) : undefined;
  const timer =
    left === undefined
      ? undefined
      : setTimeout(() => finish(new BodyTimeout(`the request body was still arriving after ${arrivalLimitMs} ms (REQUEST_TIMEOUT_MS)`)), Math.max(0, left));
  const finish = (error: Error | null, body?: unknown) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    payload.removeListener('data', onData);
    if (error) {
      reading.failed?.();
      // A body cut off at the timeout is not read on: its connection closes after the answer.
      if (!(error instanceof BodyTimeout)) readOnAndDrop(request, payload);
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
    // Cut off at the timeout already: its reading is over, and what it took was given back.
    if (finished) return;
    let body: unknown;
    try {
      body = reading.end();
    } catch (e) {
      return finish(e as Error);
    }
    finish(null, body);
  });
}

/** The most of a refused body read on and thrown away; past it the connection is closed. */
const DRAIN_MOST_BYTES = 16 * 1024 * 1024;

/**
 * Reads a refused body on and throws it away: the caller, still sending, gets the answer rather
 * than a reset connection. Bounded like any body: what is still coming at REQUEST_TIMEOUT_MS from
 * the request's arrival, or past 16 MiB, ends the connection (a body declared a terabyte long and
 * sent a byte a second held its connection, uncounted once answered, for good).
 */
export function readOnAndDrop(request: FastifyRequest, payload: NodeJS.ReadableStream): void {
  draining.add(request.raw);
  const close = () => request.raw.socket?.destroy();
  const left = arrivalLimitMs > 0 ? Math.max(0, arrivalLimitMs - (performance.now() - (request.arrivedAt ?? performance.now()))) : undefined;
  const timer = left === undefined ? undefined : setTimeout(close, left);
  let drained = 0;
  payload.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MOST_BYTES) close();
  });
  for (const end of ['end', 'close', 'error']) payload.once(end, () => clearTimeout(timer));
  payload.resume();
}
