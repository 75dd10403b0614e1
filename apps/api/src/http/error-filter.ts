import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { CatalogError, ErrorCode } from '@app/catalog';
import { storeUnreachable } from '@app/lance';
import { StorageUnavailableError } from '@app/storage';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusOf } from './error-status';

interface ErrorBody {
  error: string;
  code: number;
  detail?: string;
  instance?: string;
}

/** Fastify's own failures (bad JSON, wrong media type, body too large) in the protocol's terms. */
function fromFastify(e: { code?: string; statusCode?: number; message: string }): [number, ErrorBody] | undefined {
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return [400, { error: `malformed request body: ${e.message}`, code: ErrorCode.InvalidInput }];
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [413, { error: 'request body is larger than the configured BODY_LIMIT', code: ErrorCode.InvalidInput }];
    case 'LANCE_JSON_BODY_TOO_LARGE':
      return [413, { error: e.message, code: ErrorCode.InvalidInput }];
    case 'LANCE_BODY_TIMEOUT':
      return [408, { error: e.message, code: ErrorCode.InvalidInput }];
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return [415, { error: `unsupported content type: ${e.message}`, code: ErrorCode.InvalidInput }];
  }
  if (e instanceof SyntaxError || e.statusCode === 400) {
    return [400, { error: `malformed request: ${e.message}`, code: ErrorCode.InvalidInput }];
  }
  return undefined;
}

/** Requests whose refused body is being read to its end and thrown away. */
export const draining = new WeakSet<object>();

/** Every failure leaves as JSON `{error, code}` with the Lance code and its matching status. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const [status, body] = this.describe(exception, request);
    body.instance = request.url.split('?')[0];
    // Unavailable and throttled requests are worth retrying: say when.
    if ((body.code === ErrorCode.ServiceUnavailable || body.code === ErrorCode.Throttling) && !reply.hasHeader('retry-after')) {
      void reply.header('retry-after', '5');
    }
    // Fastify closes the connection after a refused body, lest the caller send more; a body this
    // server reads on and throws away (json-body-parser.ts) lets the caller, still sending, read the answer.
    if (draining.has(request.raw)) void reply.removeHeader('connection');
    // A body cut off as it arrived: what is still on its way would be read as the next request.
    if ((exception as { closeConnection?: boolean }).closeConnection) void reply.header('connection', 'close');
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private describe(exception: unknown, request: FastifyRequest): [number, ErrorBody] {
    if (exception instanceof CatalogError) {
      const body: ErrorBody = { error: exception.message, code: exception.code };
      if (exception.detail) body.detail = exception.detail;
      if (exception.internal) this.logger.warn(`request ${request.id}: ${exception.message}; caused by: ${exception.internal}`);
      if (exception.code === ErrorCode.Internal) body.detail = `request id ${request.id}`;
      return [httpStatusOf(exception.code), body];
    }
    if (exception instanceof StorageUnavailableError) {
      this.logger.warn(`request ${request.id}: the object store is unavailable: ${exception.message}`);
      return [503, { error: 'the warehouse\'s object store is unavailable; retry later', code: ErrorCode.ServiceUnavailable }];
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        return [
          406,
          { error: `operation not supported: ${request.method} ${request.url.split('?')[0]}`, code: ErrorCode.Unsupported },
        ];
      }
      const cause = exception.cause as { code?: string; message: string } | undefined;
      const mapped = cause ? fromFastify(cause) : undefined;
      if (mapped) return mapped;
      return [status, { error: exception.message, code: status < 500 ? ErrorCode.InvalidInput : ErrorCode.Internal }];
    }
    const mapped = fromFastify(exception as { code?: string; message: string });
    if (mapped) return mapped;
    if (exception instanceof Error && storeUnreachable(exception.message)) {
      this.logger.warn(`request ${request.id}: the object store is unavailable: ${exception.message}`);
      return [503, { error: 'the warehouse\'s object store is unavailable; retry later', code: ErrorCode.ServiceUnavailable }];
    }
    this.logger.error(`request ${request.id}: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`);
    return [500, { error: 'internal error', code: ErrorCode.Internal, detail: `request id ${request.id}` }];
  }
}
