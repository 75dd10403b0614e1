import { clientOf } from '../src/http/connection-caps';

describe('whom a connection counts against', () => {
  it('is its IPv4 address, written as IPv6 or not, and the /64 of an IPv6 address however it is written', () => {
    expect(clientOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('::ffff:203.0.113.7')).toBe('::ffff:203.0.113.7');
    for (const a of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9']) expect([a, clientOf(a)]).toEqual([a, '2001:db8:1:2::/64']);
    expect(clientOf('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
    expect(clientOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
