import { CatalogError, ErrorCode } from '@app/catalog';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * One principal's requests in flight, bounded: a caller holding many requests open (a body sent a
 * byte at a time, say) would otherwise hold every connection and descriptor the server has, and
 * every other caller would wait behind it. Counted once the credential of a header has named the
 * principal, before the body is read; the server's own calls (its service key) are not counted.
 * Answers the refusal (429 code 21) to send, or undefined once the request is counted; it is
 * uncounted when its connection closes.
 */
export function requestsInFlight(max: number): (request: FastifyRequest, reply: FastifyReply) => CatalogError | undefined {
  const held = new Map<string, number>();
  return (request, reply) => {
    const principal = request.principal;
    if (max === 0 || !principal || principal.via === 'service' || principal.via === 'anonymous') return undefined;
    const name = principal.name;
    const now = held.get(name) ?? 0;
    if (now >= max) {
      void reply.header('retry-after', '1');
      // Closed after the answer: its body, never read, would otherwise hold the connection uncounted.
      return Object.assign(
        new CatalogError(ErrorCode.Throttling, `${name} already has ${now} requests in flight, the most one principal may (REQUESTS_IN_FLIGHT_PER_PRINCIPAL); wait for some to finish`),
        { closeConnection: true },
      );
    }
    held.set(name, now + 1);
    reply.raw.once('close', () => {
      const left = (held.get(name) ?? 1) - 1;
      if (left > 0) held.set(name, left);
      else held.delete(name);
    });
    return undefined;
  };
}
