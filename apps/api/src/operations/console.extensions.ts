import { ANONYMOUS, levelIn } from '@app/auth';
import { invalidInput } from '@app/catalog';
import { authConfigured } from '@app/config';
import { RestRequest } from '../http/rest-request';
import { mount, operation, rawOperation } from './operation';

const WINDOW_DEFAULT = 100;
const WINDOW_MAX = 1000;

/**
 * The console at `/ui` and the routes it needs beside the REST binding: who the caller is
 * (`/v1/whoami`), a window of a database's whole history (`/v1/history/database`) and its live
 * feed (`/v1/history/live`). Its pages hold no data: what it shows comes through the routes, with
 * the caller's own credential.
 */
export const CONSOLE_EXTENSIONS = [
  mount({
    extension: 'Console',
    doc: { tag: 'Console', summary: 'The console: a browser page over this API (the catalog, its history and jobs).', media: 'text/html' },
    prefix: '/ui',
    access: 'public',
    install: async (fastify) => (await import('../console/console-pages')).installConsolePages(fastify),
  }),
  /** Tells a credential its own grants, so any credential may ask. */
  rawOperation({
    extension: 'WhoAmI',
    doc: { tag: 'Console', summary: 'Who the credential is: its principal, its level in the requested database and its grants.' },
    method: 'GET',
    path: '/v1/whoami',
    access: 'any-database',
    serve: (request, _reply, s) => {
      const principal = request.principal ?? ANONYMOUS;
      const database = new RestRequest(request, s.config.defaultDatabase).database();
      return {
        principal: principal.name,
        via: principal.via,
        authentication: authConfigured(s.config.auth),
        database,
        level: levelIn(principal, database) ?? null,
        default_database: s.config.defaultDatabase,
        grants: [...principal.grants].map(([name, level]) => ({ database: name, level })),
        roles: principal.roles,
        by_grants: request.callerAccess !== undefined,
      };
    },
  }),
  operation({
    extension: 'DatabaseHistory',
    doc: {
      tag: 'History',
      summary:
        "A window of the database's whole history, oldest first: the `limit` events (default 100, at most 1000) before revision `before` (default: the newest); `before` in the answer names the window before it, `head` the newest revision.",
      query: ['before', 'limit'],
    },
    method: 'GET',
    path: '/v1/history/database',
    access: 'read',
    body: 'none',
    subject: 'none',
    handle: ({ ctx, http }, s) => {
      const before = http.queryInt('before', 0);
      const limit = http.queryInt('limit', 1) ?? WINDOW_DEFAULT;
      if (limit > WINDOW_MAX) throw invalidInput(`limit must be at most ${WINDOW_MAX}, got ${limit}`);
      return s.history.databaseHistory(ctx, { before, limit });
    },
  }),
  /** A stream that stays open: the route, its heartbeats and the end of every feed at shutdown are the mount's. */
  mount({
    extension: 'LiveHistory',
    doc: {
      tag: 'History',
      summary:
        "The database's history as server-sent events as it is appended: `event: head` first, then `event: catalog` with `id: <revision>` and the history JSON, after `after` (or Last-Event-ID; default: the head), with a heartbeat comment every 15 s.",
      media: 'text/event-stream',
      query: ['after'],
    },
    prefix: '/v1/history/live',
    access: 'read',
    install: async (fastify, s) =>
      void (await import('../console/live-history-route')).installLiveHistory(fastify, s.config.defaultDatabase, s.store, {
        ...s.config.liveFeeds,
        refused: (limit) => s.metrics.liveFeedsRefused.inc({ limit }),
      }),
  }),
];
