import { Resolver } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { WebhookRefusedError } from '@app/application';
import { withTimeout } from '../with-timeout';

/** c-ares's answers that the name is not in DNS. */
const NOT_THERE = new Set(['ENOTFOUND', 'ENODATA']);
/** How long the machine's own names (/etc/hosts) are kept once read. */
const HOSTS_KEPT_MS = 5000;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a webhook's host within a deadline without `dns.lookup`, whose getaddrinfo runs on
 * libuv's threads (two of them at most for lookups, shared by the whole process: the object
 * store's, Redis's and NATS's reconnects wait behind them) and waits for as long as the system's
 * resolver does: a subscriber whose name servers never answer held them. The machine's own names
 * come first, as getaddrinfo takes them (`hostsFile`, and `localhost`, RFC 6761), then DNS through
 * c-ares (Node's `Resolver`), which runs on the event loop and is abandoned at the deadline.
 * `servers`: the name servers to ask (WEBHOOK_DNS_SERVERS); absent, the system's.
 */
export async function resolveWithin(host: string, timeoutMs: number, servers?: readonly string[], hostsFile = '/etc/hosts'): Promise<ResolvedAddress[]> {
  // A name written fully qualified (`internal.`) is the same name.
  const own = await machineNames(hostsFile).then((names) => names.get(host.toLowerCase().replace(/\.$/, '')));
  if (own) return own;
  if (isLocalhost(host)) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
  const resolver = resolverFor(timeoutMs, servers);
  // Left to c-ares past the deadline: it gives up by itself within about as long (a third, then two
  // tries), and cancelling would fail every other delivery's lookup on the same resolver.
  const answered = await withTimeout(Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]), timeoutMs).catch(() => undefined);
  if (answered === undefined) throw new WebhookRefusedError(`${host} did not resolve within ${timeoutMs} ms (WEBHOOK_TIMEOUT_MS): its name servers did not answer`);
  const [v4, v6] = answered;
  const addresses = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (addresses.length > 0) return addresses;
  const codes = [v4, v6].map((r) => (r.status === 'rejected' ? String((r.reason as NodeJS.ErrnoException).code) : 'ENODATA'));
  if (codes.every((c) => NOT_THERE.has(c))) throw new WebhookRefusedError(`${host} does not resolve`);
  const failure = codes.find((c) => !NOT_THERE.has(c));
  throw new WebhookRefusedError(`${host} did not resolve: its name servers answered ${failure}`);
}

const resolvers = new Map<string, Resolver>();

/** One resolver per deadline and name servers, made once: making one reads the system's resolver configuration, on the event loop. */
function resolverFor(timeoutMs: number, servers: readonly string[] | undefined): Resolver {
  const key = `${timeoutMs} ${servers?.join(',') ?? ''}`;
  let resolver = resolvers.get(key);
  if (!resolver) {
    resolver = new Resolver({ timeout: Math.max(50, Math.floor(timeoutMs / 3)), tries: 2 });
    if (servers?.length) resolver.setServers([...servers]);
    resolvers.set(key, resolver);
  }
  return resolver;
}

function isLocalhost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

let kept: { file: string; at: number; names: Promise<Map<string, ResolvedAddress[]>> } | undefined;

/** The names the hosts file gives addresses, read at most every HOSTS_KEPT_MS; none when it cannot be read. */
function machineNames(file: string): Promise<Map<string, ResolvedAddress[]>> {
  if (kept && kept.file === file && Date.now() - kept.at < HOSTS_KEPT_MS) return kept.names;
  const names = readFile(file, 'utf8').then(parseHosts, () => new Map<string, ResolvedAddress[]>());
  kept = { file, at: Date.now(), names };
  return names;
}

/** hosts(5): an address, then its names, `#` starting a comment. */
export function parseHosts(text: string): Map<string, ResolvedAddress[]> {
  const names = new Map<string, ResolvedAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address ? isIP(address.replace(/%.*$/, '')) : 0;
    if (family === 0) continue;
    for (const alias of aliases) {
      const name = alias.toLowerCase();
      const known = names.get(name) ?? [];
      if (!known.some((a) => a.address === address)) known.push({ address, family });
      names.set(name, known);
    }
  }
  return names;
}
