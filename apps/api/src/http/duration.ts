import { invalidInput } from '@app/catalog';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as the spec writes them (`"30s"`, `"5m"`; also `ms` and `h`, and a sum such as
 * `"1m30s"`), or a bare number of milliseconds; undefined when absent. At most a day.
 */
export function parseDuration(value: string | undefined, what: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text);
  else if (/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) {
    ms = 0;
    for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) ms += Number(amount) * UNIT_MS[unit];
  } else {
    throw invalidInput(`${what} '${value}' is not a duration: write it as the spec does, such as "30s", "5m" or "1h" (or a number of milliseconds)`);
  }
  if (!Number.isFinite(ms) || ms < 1 || ms > 86_400_000) throw invalidInput(`${what} '${value}' must be from 1 ms to 24 h`);
  return Math.round(ms);
}
