import { CatalogError, ErrorCode } from '@app/catalog';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * One principal's requests in flight, bounded: a caller holding many requests open (a body sent a
 * byte at a time, say) would otherwise hold every connection and descriptor the server has, and
 * every other caller would wait behind it. Counted once the credential of a header has named the
 * principal, before the body is read; the server's own calls (its service key) are not counted.
 * A request that names its credential only in its body's `identity` is not known to be anyone's
 * until its body is read: it is counted by the address it comes from, under the same bound.
 * Answers the refusal (429 code 21) to send, or undefined once the request is counted; it is
 * uncounted when its connection closes.
 */
export function requestsInFlight(max: number): (request: FastifyRequest, reply: FastifyReply) => CatalogError | undefined {
  const byPrincipal = new Map<string, number>();
  const byAddress = new Map<string, number>();
  return (request, reply) => {
    if (max === 0) return undefined;
    const name = countedAs(request);
    if (name === undefined) return undefined;
    const held = request.identityInBody ? byAddress : byPrincipal;
    const now = held.get(name) ?? 0;
    if (now >= max) {
      void reply.header('retry-after', '1');
      const who = request.identityInBody ? `the address ${request.ip} already has ${now} requests whose credential is in their body` : `${name} already has ${now} requests`;
      // Closed after the answer: its body, never read, would otherwise hold the connection uncounted.
      return Object.assign(
        new CatalogError(ErrorCode.Throttling, `${who} in flight, the most one caller may (REQUESTS_IN_FLIGHT_PER_PRINCIPAL); wait for some to finish`),
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

/** Whom a request counts against: its principal, or its address while its credential is still in its body. */
function countedAs(request: FastifyRequest): string | undefined {
  if (request.identityInBody) return request.ip;
  const principal = request.principal;
  if (!principal || principal.via === 'service' || principal.via === 'anonymous') return undefined;
  return principal.name;
}
