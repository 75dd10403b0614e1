import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { HistoryService } from '@app/application';
import { ALL_DATABASES, ANONYMOUS, AccessLevel, atLeast } from '@app/auth';
import { invalidInput } from '@app/catalog';
import { AppConfig, authConfigured } from '@app/config';
import { EVENT_STORE } from '@app/core';
import { EventStore } from '@app/event-store';
import { RestRequests } from '../http/rest-request.factory';
import { installConsolePages } from './console-pages';
import { installLiveHistory } from './live-history-route';

const WINDOW_DEFAULT = 100;
const WINDOW_MAX = 1000;

/**
 * The console at `/ui` and the routes it needs beside the REST binding: who the caller is
 * (`/v1/whoami`), a window of a database's whole history (`/v1/history/database`) and its live
 * feed (`/v1/history/live`). Their levels are in access-policy.ts like every route's.
 */
export function installConsole(app: NestFastifyApplication, config: AppConfig): void {
  const fastify = app.getHttpAdapter().getInstance();
  const rest = app.get(RestRequests);
  const history = app.get(HistoryService);
  const store = app.get<EventStore>(EVENT_STORE);
  installConsolePages(fastify);
  installLiveHistory(fastify, rest, store);

  fastify.get('/v1/whoami', (request) => {
    const principal = request.principal ?? ANONYMOUS;
    const database = rest.of(request).database();
    const grants = [...principal.grants].map(([name, level]) => ({ database: name, level }));
    return {
      principal: principal.name,
      via: principal.via,
      authentication: authConfigured(config.auth),
      database,
      level: levelIn(principal.grants, database),
      default_database: config.defaultDatabase,
      grants,
    };
  });

  fastify.get('/v1/history/database', (request) => {
    const r = rest.of(request);
    const before = r.queryInt('before', 0);
    const limit = r.queryInt('limit', 1) ?? WINDOW_DEFAULT;
    if (limit > WINDOW_MAX) throw invalidInput(`limit must be at most ${WINDOW_MAX}, got ${limit}`);
    return history.databaseHistory(r.context(), { before, limit });
  });
}

/** The highest level held in `database`, through its own grant or through `*`. */
function levelIn(grants: ReadonlyMap<string, AccessLevel>, database: string): AccessLevel | null {
  const own = grants.get(database);
  const all = grants.get(ALL_DATABASES);
  if (own && all) return atLeast(own, all) ? own : all;
  return own ?? all ?? null;
}
