import { OPERATIONS } from '../operations';
import { RouteAccess, isMount, isRaw } from '../operations/operation';

/**
 * What each route needs, read from the edge's entries (operations/index.ts), where each names its
 * level beside its route, so the levels can be reviewed as a whole there. Keys are
 * `METHOD route-template` as Fastify registers them. A route registered without an entry stops
 * the server at start-up (auth.hooks.ts), so nothing is ever served without a decision.
 */
const ROUTES = new Map<string, RouteAccess>();
/** Routes registered by plugins under a prefix (the API page, the queue dashboard): the mount's level. */
const PREFIXES: [string, RouteAccess][] = [];
for (const entry of OPERATIONS) {
  if (isMount(entry)) PREFIXES.push([entry.prefix, entry.access]);
  else {
    ROUTES.set(`${entry.method} ${entry.path}`, entry.access);
    if (!isRaw(entry) && entry.alsoGet) ROUTES.set(`GET ${entry.path}`, entry.access);
  }
}

/** Asked on every request with one of a few hundred route patterns: each is worked out once. */
const known = new Map<string, RouteAccess | undefined>();

export function accessOf(method: string, url: string): RouteAccess | undefined {
  const key = `${method} ${url}`;
  if (known.has(key)) return known.get(key);
  const access = lookUp(method, url);
  known.set(key, access);
  return access;
}

function lookUp(method: string, url: string): RouteAccess | undefined {
  if (method === 'HEAD' || method === 'OPTIONS') method = 'GET';
  const exact = ROUTES.get(`${method} ${url.replace(/\/$/, '') || '/'}`);
  if (exact) return exact;
  return PREFIXES.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`))?.[1];
}
