import http from 'node:http';
import https from 'node:https';
import { LookupFunction, isIP } from 'node:net';
import { WebhookDelivery, WebhookRefusedError } from '@app/application';
import { isPrivateAddress } from './network-guard';
import { resolveWithin } from './webhook-dns';

/** What is read of a receiver's answer before the connection is dropped: the status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs webhooks with the SSRF guard applied at each delivery: the host is resolved (within the
 * deadline, off libuv's threads: webhook-dns.ts), every address it resolves to is checked, and the
 * connection goes to the checked address (Node's `lookup` is replaced for the request, so no second
 * resolution can answer otherwise). TLS still verifies the URL's host name. Redirects are not followed (a 3xx is a failure); the whole exchange has a
 * deadline and the answer's body is read up to 64 KiB.
 */
export class HttpWebhookDelivery implements WebhookDelivery {
  private readonly agents = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }) };

  constructor(private readonly options: { allowPrivateNetworks: boolean; timeoutMs: number; dnsServers?: readonly string[] }) {}

  /** The address a delivery to `url` goes to now, once every address its host resolves to passed the guard. */
  private async resolve(target: string): Promise<{ url: URL; address: string; family: number }> {
    const url = new URL(target);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookRefusedError('only http and https URLs are delivered to');
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveWithin(host, this.options.timeoutMs, this.options.dnsServers);
    if (!this.options.allowPrivateNetworks) {
      const inside = addresses.find((a) => isPrivateAddress(a.address));
      if (inside) throw new WebhookRefusedError(`${host} resolves to ${inside.address}, a loopback, private or link-local address (WEBHOOK_ALLOW_PRIVATE_NETWORKS is off)`);
    }
    return { url, ...addresses[0] };
  }

  async check(target: string): Promise<void> {
    await this.resolve(target);
  }

  async post(target: string, body: string, headers: Record<string, string>): Promise<void> {
    const { url, address, family } = await this.resolve(target);
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const client = url.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: 'POST',
          agent: this.agents[url.protocol as 'http:' | 'https:'],
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'lance-catalog-webhooks' },
          lookup: ((_host: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) =>
            opts.all ? callback(null, [{ address, family }]) : callback(null, address, family)) as unknown as LookupFunction,
          signal,
        },
        (response) => {
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) response.destroy();
          });
          const settle = () => {
            const status = response.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve();
            else reject(new Error(`the receiver answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`));
          };
          response.once('end', settle);
          response.once('close', settle);
          response.once('error', () => settle());
        },
      );
      request.once('error', (e: NodeJS.ErrnoException) =>
        reject(new Error(e.name === 'AbortError' || e.code === 'ABORT_ERR' ? `no answer within ${this.options.timeoutMs} ms` : `${e.code ?? e.message} reaching the receiver`)),
      );
      request.end(body);
    });
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}
