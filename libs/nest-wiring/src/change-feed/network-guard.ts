import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless the operator allows private networks: loopback, the
 * private ranges, link-local (the cloud metadata service, 169.254.169.254 and fd00:ec2::254, among
 * them), carrier-grade NAT, unique-local, multicast, the unspecified and reserved ones, and the
 * IPv6 ranges that carry an IPv4 address or translate to one (NAT64, 6to4, Teredo).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  // Local-use NAT64, and 6to4 and Teredo, which carry an IPv4 address (a loopback or private one as well).
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['2001::', 32],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Whether an address lies in a private, loopback, link-local or otherwise internal range. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1, ::ffff:7f00:1) is judged as the IPv4 one.
  const mapped = /^(?:0{0,4}:){0,5}ffff:(.+)$/.exec(lower)?.[1] ?? /^::(\d+\.\d+\.\d+\.\d+)$/.exec(lower)?.[1];
  if (mapped) {
    if (isIP(mapped) === 4) return blocked.check(mapped, 'ipv4');
    const [hi, lo] = mapped.split(':').map((h) => parseInt(h, 16));
    if (Number.isInteger(hi) && Number.isInteger(lo)) return blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
    return true;
  }
  return blocked.check(lower, 'ipv6');
}
