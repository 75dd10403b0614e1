import { isIP } from 'node:net';
import { z } from 'zod';

/** Environment values read the same way by every setting: a bad one is reported with the variable's name and its range. */
export const bool = (name: string, fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const s = v.toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false, got '${v}'` });
      return z.NEVER;
    });

export const int = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer from ${min} to ${max}, got '${v}'` });
        return z.NEVER;
      }
      return n;
    });

/** A comma-separated list of name servers, each an IP address with an optional port, as Node's Resolver takes them; undefined when one is not. */
export function dnsServersOf(value: string): string[] | undefined {
  const servers = value.split(',').map((s) => s.trim());
  const each = /^(?:(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?|\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?|([0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*))$/;
  for (const s of servers) {
    const m = each.exec(s);
    if (!m) return undefined;
    const address = m[1] ?? m[3] ?? m[5];
    const port = Number(m[2] ?? m[4] ?? 53);
    if (isIP(address) === 0 || port < 1 || port > 65535) return undefined;
  }
  return servers;
}
