import { BufferPool } from '@app/lance';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BodyParser } from './untyped-body-parser';
import { readBody, readOnAndDrop } from './body-reader';

const ARROW_STREAM = 'application/vnd.apache.arrow.stream';

/** Bodies smaller than this are gathered as Node reads them: their memory comes from Node's own slabs. */
const POOLED_FROM = 64 * 1024;
/** Body buffers of up to 64 MiB, 128 MiB in all, sized in whole MiB, are kept for the next body. */
const bodies = new BufferPool(64 * 1024 * 1024, 128 * 1024 * 1024, 1024 * 1024);
/** The kept buffer under each request's body, until its operation is over. */
const lent = new WeakMap<object, Buffer>();

/** Fastify's own failures, answered as before (error-filter.ts maps their codes). */
class BodyFailure extends Error {
  constructor(
    readonly code: 'FST_ERR_CTP_BODY_TOO_LARGE' | 'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads Arrow IPC bodies (InsertIntoTable, CreateTable, MergeInsertIntoTable, EnterpriseCreateTable)
 * into a buffer kept from one body to the next, rather than into a fresh one per request: a fresh
 * multi-megabyte buffer's page faults cost more than the copy (BufferPool). The buffer is the
 * request's until its operation is over, whatever the outcome (`releaseArrowBody`). A body refused
 * while it arrives gives its buffer back at once; one whose operation never runs (refused once it
 * has arrived, or its caller gone) leaves its buffer to the garbage collector, never to another
 * request. A Content-Length past the limit is refused before a byte is read, and the body read on
 * and thrown away, so the caller, still sending, gets the answer. Answers the parser, for bodies
 * sent without a content type (untyped-body-parser.ts).
 */
export function installArrowBodyParser(fastify: FastifyInstance, maxBytes: number): BodyParser {
  const tooLarge = () => new BodyFailure('FST_ERR_CTP_BODY_TOO_LARGE', 413, 'Request body is too large');
  const mismatch = () => new BodyFailure('FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400, 'Request body size did not match Content-Length');
  const parse: BodyParser = (request, payload, done) => {
    const header = request.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    if (declared !== undefined && declared > maxBytes) {
      readOnAndDrop(request, payload);
      return done(tooLarge(), undefined);
    }
    // Known in advance, and a kept buffer fits: the bytes go straight into it. Otherwise gathered as
    // they come, then copied into one: a declared length alone reserves no memory.
    const buffer = declared !== undefined && declared >= POOLED_FROM ? bodies.takeKept(declared) : undefined;
    const chunks: Buffer[] = [];
    let bytes = 0;
    readBody(request, payload, {
      chunk: (chunk) => {
        if (bytes + chunk.length > (declared ?? maxBytes)) throw declared === undefined ? tooLarge() : mismatch();
        if (buffer) chunk.copy(buffer, bytes);
        else chunks.push(chunk);
        bytes += chunk.length;
      },
      end: () => {
        if (declared !== undefined && bytes !== declared) throw mismatch();
        if (buffer) return lend(request, buffer, bytes);
        if (bytes < POOLED_FROM) return Buffer.concat(chunks, bytes);
        const gathered = bodies.take(bytes);
        let at = 0;
        for (const chunk of chunks) at += chunk.copy(gathered, at);
        return lend(request, gathered, bytes);
      },
      // A refused body was never lent: nothing else holds its buffer.
      failed: () => {
        if (buffer) bodies.give(buffer);
      },
    }, done);
  };
  fastify.addContentTypeParser(ARROW_STREAM, parse);
  return parse;
}

function lend(request: FastifyRequest, buffer: Buffer, length: number): Buffer {
  lent.set(request.raw, buffer);
  return buffer.subarray(0, length);
}

/**
 * Gives the request's body buffer back for the next body. Called once the operation that read
 * it is over: nothing it started may still read the body (the data plane copies a body into its
 * process's input, or hands it to Lance and waits for Lance to finish).
 */
export function releaseArrowBody(request: FastifyRequest): void {
  const buffer = lent.get(request.raw);
  if (!buffer) return;
  lent.delete(request.raw);
  bodies.give(buffer);
}
