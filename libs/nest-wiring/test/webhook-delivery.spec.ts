import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, createServer } from 'node:http';
import { WebhookRefusedError } from '@app/application';
import { HttpWebhookDelivery } from '../src/change-feed/http-webhook-delivery';
import { isPrivateAddress } from '../src/change-feed/network-guard';
import { parseHosts, resolveWithin } from '../src/change-feed/webhook-dns';

describe('webhook delivery', () => {
  let server: Server;
  let url: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (req.url === '/slow') return void setTimeout(() => res.writeHead(204).end(), 700);
      if (req.url === '/big') return void res.writeHead(500).end(Buffer.alloc(1024 * 1024));
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('refuses loopback, private, link-local and unique-local addresses, the metadata service among them', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00:ec2::254', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '2002:7f00:1::', '64:ff9b:1::a', '2001:0:4136:e378::1', 'not-an-ip']) {
      expect([a, isPrivateAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) expect([a, isPrivateAddress(a)]).toEqual([a, false]);
  });

  it('refuses a URL resolving to a private address at delivery unless private networks are allowed, and sends nothing', async () => {
    const guarded = new HttpWebhookDelivery({ allowPrivateNetworks: false, timeoutMs: 1000 });
    const before = seen.length;
    await expect(guarded.post(`${url}/in`, '{}', {})).rejects.toBeInstanceOf(WebhookRefusedError);
    await expect(guarded.post(`http://localhost:${new URL(url).port}/in`, '{}', {})).rejects.toThrow(/loopback, private or link-local/);
    await expect(guarded.post('http://[::ffff:127.0.0.1]:9/in', '{}', {})).rejects.toBeInstanceOf(WebhookRefusedError);
    expect(seen.length).toBe(before);
    const open = new HttpWebhookDelivery({ allowPrivateNetworks: true, timeoutMs: 1000 });
    await open.post(`${url}/in`, '{}', {});
    expect(seen.at(-1)).toBe('/in');
    guarded.close();
    open.close();
  });

  it('resolves within its deadline off libuv\'s threads: a name server that never answers costs the delivery its deadline, no more', async () => {
    const silent = createSocket('udp4');
    const asked: string[] = [];
    // A name server that reads every query and answers none.
    silent.on('message', (query) => asked.push(query.toString('latin1')));
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    const servers = [`127.0.0.1:${silent.address().port}`];
    const delivery = new HttpWebhookDelivery({ allowPrivateNetworks: false, timeoutMs: 400, dnsServers: servers });
    try {
      const started = Date.now();
      await expect(delivery.check('https://hooks.example.test/in')).rejects.toThrow(
        new WebhookRefusedError('hooks.example.test did not resolve within 400 ms (WEBHOOK_TIMEOUT_MS): its name servers did not answer'),
      );
      expect(Date.now() - started).toBeLessThan(1000);
      expect(asked.some((q) => q.includes('hooks') && q.includes('example'))).toBe(true);
      // A name its DNS does not hold is one of the machine's own (the system's lookup, within the deadline).
      await expect(new HttpWebhookDelivery({ allowPrivateNetworks: false, timeoutMs: 2000 }).check(`http://localhost:${new URL(url).port}/in`)).rejects.toThrow(/resolves to .*loopback/);
      // A name server that refuses at once fails the delivery at once: nothing else is asked.
      const refusing = await closedUdpPort();
      await expect(resolveWithin('hooks.example.test', 2000, [`127.0.0.1:${refusing}`])).rejects.toThrow(
        new WebhookRefusedError('hooks.example.test did not resolve: its name servers answered ECONNREFUSED'),
      );
      // The machine's own names are taken from its hosts file before any name server is asked.
      const hosts = join(mkdtempSync(join(tmpdir(), 'hosts-')), 'hosts');
      writeFileSync(hosts, '# comment\n127.0.0.1 localhost\n10.1.2.3   printer.internal  Printer  # ours\nfe80::1%eth0 link\nnot-an-address name\n');
      const before = asked.length;
      expect(await resolveWithin('PRINTER', 400, servers, hosts)).toEqual([{ address: '10.1.2.3', family: 4 }]);
      expect(await resolveWithin('printer.internal.', 400, servers, hosts)).toEqual([{ address: '10.1.2.3', family: 4 }]);
      expect(await resolveWithin('app.localhost', 400, servers, hosts)).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
      expect(asked.length).toBe(before);
      expect([...parseHosts(readFileSync(hosts, 'utf8')).keys()]).toEqual(['localhost', 'printer.internal', 'printer', 'link']);
    } finally {
      delivery.close();
      silent.close();
    }
  });

  it('follows no redirect, keeps to its deadline and reads a bounded answer', async () => {
    const open = new HttpWebhookDelivery({ allowPrivateNetworks: true, timeoutMs: 300 });
    await expect(open.post(`${url}/redirect`, '{}', {})).rejects.toThrow(/302 \(redirects are not followed\)/);
    await expect(open.post(`${url}/slow`, '{}', {})).rejects.toThrow(/no answer within 300 ms/);
    await expect(open.post(`${url}/big`, '{}', {})).rejects.toThrow(/500/);
    expect(seen).not.toContain('/latest/meta-data/');
    open.close();
  });
});

/** A UDP port nothing listens on now. */
async function closedUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const { port } = socket.address();
  await new Promise<void>((r) => socket.close(() => r()));
  return port;
}
