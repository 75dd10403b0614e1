/**
 * Trailing and leading slashes cut by scanning: `/\/+$/` retries its run of slashes from every
 * position of a run that does not end the string, quadratic in it, and a location is the caller's
 * (a run of 100,000 slashes held the event loop 15 s).
 */
export function withoutTrailing(s: string, char: string): string {
  const code = char.charCodeAt(0);
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === code) end--;
  return end === s.length ? s : s.slice(0, end);
}

export const withoutTrailingSlashes = (s: string) => withoutTrailing(s, '/');

export function withoutEdgeSlashes(s: string): string {
  let start = 0;
  while (start < s.length && s.charCodeAt(start) === 47) start++;
  return withoutTrailingSlashes(s.slice(start));
}
