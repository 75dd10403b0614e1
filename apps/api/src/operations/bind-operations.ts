import { CatalogError, ErrorCode, invalidInput } from '@app/catalog';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborted when the caller leaves before its answer (see departureOf). */
    departure?: () => AbortSignal;
  }
}
import { Answer, Operation, OperationServices, RawOperation, Subject, isMount, isRaw } from './operation';
import { inOrder } from './check-order';
import { judgeByGrants } from './grant-gate';
import { parseRequest, requestParser } from './parse-request';
import { releaseArrowBody } from '../http/arrow-body-parser';

const CONTENT_TYPES: Record<Answer, string | undefined> = {
  json: undefined,
  string: 'application/json',
  number: 'application/json',
  'arrow-file': 'application/vnd.apache.arrow.file',
  prometheus: 'text/plain; version=0.0.4; charset=utf-8',
  empty: undefined,
};

/**
 * Binds the entries on Fastify: each mount's plugin, then each route, with its status and content
 * type. Routes are Fastify's own, not Nest's: Nest's per-request pipeline of guards, interceptors,
 * pipes and response mapping (none of which the edge uses) cost about 8 µs a request against a
 * bare Fastify route's 27 µs, a third of what a whole catalog read may cost. A thrown error, or a
 * rejected promise, goes to Fastify's error handler, which Nest routes to the global ErrorFilter.
 */
export async function bindOperations(fastify: FastifyInstance, services: OperationServices): Promise<void> {
  for (const entry of services.operations) if (isMount(entry)) await entry.install(fastify, services);
  for (const entry of services.operations) {
    if (isMount(entry)) continue;
    const handler = answer(entry, isRaw(entry) ? rawHandlerOf(entry) : handlerOf(entry), services);
    const config = { arrowBody: !isRaw(entry) && entry.body === 'arrow-stream' };
    fastify.route({ method: entry.method, url: entry.path, config, handler });
    if (!isRaw(entry) && entry.alsoGet) {
      const get = answer(entry, getHandlerOf(entry, entry.alsoGet), services);
      fastify.route({ method: 'GET', url: entry.path, config, exposeHeadRoute: false, handler: get });
    }
  }
}

type Handler = (request: FastifyRequest, reply: FastifyReply, services: OperationServices) => unknown;

/** An operation's handler behind the parsing every such request shares. */
function handlerOf(entry: Operation): Handler {
  const parser = requestParser(entry);
  return (request, _reply, services) => {
    if (entry.credential && !hasApiKey(request)) {
      throw new CatalogError(ErrorCode.Unauthenticated, 'this route needs an x-api-key header');
    }
    // A refusal of the body waits for the subject's lookup (check-order.ts).
    const refused = (e: unknown) => inOrder(e, entry, parser.idSegment, request, services);
    const run = () => entry.handle(parseRequest(parser, request, services.config.defaultDatabase) as never, services);
    let result: unknown;
    try {
      // A caller whose grants decide is judged on the path's subject before its body is read.
      const judged = request.callerAccess ? judgeByGrants(entry, parser.idSegment, request, services) : undefined;
      result = judged ? judged.then(run) : run();
    } catch (e) {
      return refused(e);
    }
    if (entry.body !== 'arrow-stream') return isThenable(result) ? Promise.resolve(result).catch(refused) : result;
    // The body's buffer is kept for the next body once nothing the operation started can read it.
    return Promise.resolve(result)
      .catch(refused)
      .finally(() => releaseArrowBody(request));
  };
}

/**
 * A GET of an entry that also answers one: no body, so a parameter its query holds that the entry
 * does not read there (a count's `version`, say) is refused rather than answered without.
 */
function getHandlerOf(entry: Operation, reads: readonly string[]): Handler {
  const known = new Set(['delimiter', ...reads]);
  const handler = handlerOf(entry);
  return (request, reply, services) => {
    const unread = Object.keys((request.query ?? {}) as Record<string, unknown>).filter((k) => !known.has(k));
    if (unread.length) {
      throw invalidInput(`a GET of this operation reads no ${unread.map((k) => `'${k}'`).join(', ')}: send ${unread.length > 1 ? 'them' : 'it'} in a POST's JSON body`);
    }
    return handler(request, reply, services);
  };
}

/**
 * A raw route's handler: one whose path names a subject is judged on it by the caller's grants
 * first, like every operation; one that names an id without saying what it is stops the server.
 */
function rawHandlerOf(entry: RawOperation): Handler {
  const idSegment = entry.path.split('/').findIndex((s) => s.startsWith(':'));
  if (idSegment === -1 || entry.subject === 'none') return entry.serve;
  if (!entry.subject) throw new Error(`${entry.method} ${entry.path}: a raw route naming an id says its subject`);
  const judged = entry as RawOperation & { subject: Subject };
  return (request, reply, services) => {
    const judging = request.callerAccess ? judgeByGrants(judged, idSegment, request, services) : undefined;
    return judging ? judging.then(() => entry.serve(request, reply, services)) : entry.serve(request, reply, services);
  };
}

/** Anonymous callers pass only with the header itself; an authenticated principal has shown a credential. */
function hasApiKey(request: FastifyRequest): boolean {
  const key = request.headers['x-api-key'];
  return !!request.principal && (request.principal.via !== 'anonymous' || (typeof key === 'string' && key !== ''));
}

function answer(entry: Operation | RawOperation, handler: Handler, services: OperationServices) {
  const status = entry.status ?? 200;
  const kind = entry.answer ?? 'json';
  const contentType = CONTENT_TYPES[kind];
  const encode = encoderOf(kind);
  return (request: FastifyRequest, reply: FastifyReply): void => {
    request.departure = departureOf(reply);
    void reply.code(status);
    if (contentType) void reply.header('content-type', contentType);
    const send = (value: unknown) => {
      if (!reply.sent) void reply.send(encode ? encode(value) : value);
    };
    const fail = (error: unknown) => {
      if (!reply.sent) void reply.send(error instanceof Error ? error : new Error(String(error)));
    };
    let result: unknown;
    try {
      result = handler(request, reply, services);
    } catch (e) {
      return fail(e);
    }
    if (isThenable(result)) result.then(send, fail);
    else send(result);
  };
}

/**
 * The signal a data operation stops on when its caller leaves before the answer (the connection
 * closed with the response unfinished); made on first use, as most requests never run one.
 */
function departureOf(reply: FastifyReply): () => AbortSignal {
  let controller: AbortController | undefined;
  return () => {
    if (controller) return controller.signal;
    controller = new AbortController();
    const response = reply.raw;
    const left = () => {
      if (!response.writableFinished) controller!.abort();
    };
    if (response.destroyed) left();
    else response.once('close', left);
    return controller.signal;
  };
}

function encoderOf(kind: Answer): ((value: unknown) => unknown) | undefined {
  switch (kind) {
    case 'empty':
      return () => undefined;
    case 'number':
    case 'string':
      return (value) => JSON.stringify(value);
    case 'arrow-file':
      // A view of the encoded bytes, not a copy.
      return (value) => {
        const file = value as Uint8Array;
        return Buffer.from(file.buffer, file.byteOffset, file.byteLength);
      };
    default:
      return undefined;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
