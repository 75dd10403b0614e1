import { Resolver, lookup } from 'node:dns/promises';
import { WebhookRefusedError } from '@app/application';

/** c-ares's code for name servers that did not answer in time: the one failure not handed on to the system's lookup. */
const NO_ANSWER = new Set(['ETIMEOUT', 'ECANCELLED']);

export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a webhook's host within a deadline, asking DNS through c-ares (Node's `Resolver`), which
 * runs on the event loop: `dns.lookup` runs getaddrinfo on libuv's four threads, which the whole
 * process shares, and a subscriber's name server that never answers held one for each delivery for
 * as long as the system resolver waited. A name DNS answers it does not hold (or a name server
 * that refuses at once) is then looked up the system's way (the machine's own names, `localhost`
 * among them), within what is left of the deadline; name servers that do not answer in time are
 * not asked again that way. `servers`: the name servers to ask (WEBHOOK_DNS_SERVERS); absent, the
 * system's.
 */
export async function resolveWithin(host: string, timeoutMs: number, servers?: readonly string[]): Promise<ResolvedAddress[]> {
  const started = Date.now();
  const resolver = new Resolver({ timeout: Math.max(50, Math.floor(timeoutMs / 3)), tries: 2 });
  if (servers?.length) resolver.setServers([...servers]);
  const answered = await withinDeadline(Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]), timeoutMs, () => resolver.cancel());
  if (answered === undefined) throw noAnswer(host, timeoutMs);
  const [v4, v6] = answered;
  const addresses = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (addresses.length > 0) return addresses;
  const codes = [v4, v6].map((r) => (r.status === 'rejected' ? String((r.reason as NodeJS.ErrnoException).code) : 'ENODATA'));
  if (codes.some((c) => NO_ANSWER.has(c))) throw noAnswer(host, timeoutMs);
  const left = timeoutMs - (Date.now() - started);
  const own = left > 0 ? await withinDeadline(lookup(host, { all: true, verbatim: true }).catch(() => []), left) : undefined;
  if (own === undefined) throw noAnswer(host, timeoutMs);
  if (own.length === 0) throw new WebhookRefusedError(`${host} does not resolve`);
  return own;
}

function noAnswer(host: string, timeoutMs: number): WebhookRefusedError {
  return new WebhookRefusedError(`${host} did not resolve within ${timeoutMs} ms (WEBHOOK_TIMEOUT_MS): its name servers did not answer`);
}

/** The promise's value, or undefined once `ms` have passed (`onLate` then called). */
function withinDeadline<T>(promise: Promise<T>, ms: number, onLate?: () => void): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      onLate?.();
      resolve(undefined);
    }, ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
