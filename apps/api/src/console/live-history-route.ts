import { PassThrough } from 'node:stream';
import { HistoryEntry, LiveHistory, historyVisibleTo, unavailableAs503 } from '@app/application';
import { levelIn } from '@app/auth';
import { CatalogError, ErrorCode, invalidInput } from '@app/catalog';
import { EventStore } from '@app/event-store';
import { catalogStreamOf } from '@app/projections';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RestRequest } from '../http/rest-request';

/** A comment line this often keeps proxies (nginx's proxy_read_timeout) and browsers from closing an idle feed. */
const HEARTBEAT_MS = 15_000;
/** What a browser waits before reconnecting (it then sends Last-Event-ID). */
const RETRY_MS = 2_000;

/**
 * `GET /v1/history/live`: the database's history as server-sent events, as it is appended. Each
 * event is `event: catalog`, `id: <revision>`, `data: <the history routes' JSON>`; the first is
 * `event: head` with the stream's head revision when the feed opened. It starts after `after`
 * (a revision; -1 for the whole log), or after `Last-Event-ID` when a client reconnects, or at
 * the head: new events only.
 */
export function installLiveHistory(
  fastify: FastifyInstance,
  defaultDatabase: string,
  store: EventStore,
  limits: { perPrincipal: number; max: number; refused?: (limit: 'principal' | 'total') => void },
): LiveHistory {
  const live = new LiveHistory(store);
  const open = new Set<PassThrough>();
  const byPrincipal = new Map<string, number>();
  fastify.get('/v1/history/live', async (request, reply) => {
    const database = new RestRequest(request, defaultDatabase).database();
    // Each feed holds a socket and, while it replays, a share of the event loop: bounded per principal and in all.
    const principal = request.principal?.name ?? '';
    const held = byPrincipal.get(principal) ?? 0;
    if (held >= limits.perPrincipal || open.size >= limits.max) {
      const which = held >= limits.perPrincipal ? 'principal' : 'total';
      limits.refused?.(which);
      throw new CatalogError(
        ErrorCode.Throttling,
        which === 'principal'
          ? `${principal || 'this caller'} already holds ${held} live history feeds, the most one principal may (LIVE_FEEDS_PER_PRINCIPAL); close one first`
          : `the server already holds ${open.size} live history feeds, the most it serves (LIVE_FEEDS_MAX); retry later`,
      );
    }
    const head = await unavailableAs503(() => store.streamRevision(catalogStreamOf(database)));
    const after = startingRevision(request) ?? head;
    // A feed from past the head would wait for revisions the log gives to other events first (a
    // Last-Event-ID kept across a store's restore or import, say), and send nothing: say so.
    if (after > head) {
      throw invalidInput(`after (or Last-Event-ID) ${after} is past the head of the log, revision ${head}; follow from the head (no after) or from a revision it has`);
    }
    const out = new PassThrough();
    open.add(out);
    byPrincipal.set(principal, (byPrincipal.get(principal) ?? 0) + 1);
    out.write(`retry: ${RETRY_MS}\n\nevent: head\ndata: ${JSON.stringify({ database, revision: head })}\n\n`);
    // A caller whose grants decide its access is sent only events of what it may read.
    const visible = historyVisibleTo({ sees: request.callerAccess, principal: request.principal?.name, level: request.principal ? levelIn(request.principal, database) : undefined });
    const follower = live.follow(database, after, {
      write: (entry: HistoryEntry) =>
        (visible && !visible({ type: entry.type, data: entry.data, metadata: { transactionId: entry.transaction_id } })) ||
        out.write(`id: ${entry.revision}\nevent: catalog\ndata: ${JSON.stringify(entry)}\n\n`),
      drained: () => new Promise<void>((resolve) => (out.writableNeedDrain && !out.destroyed ? out.once('drain', resolve).once('close', resolve) : resolve())),
      fail: (error) => {
        request.log.warn({ reqId: request.id, err: error }, 'live history feed ended: the event store could not be read');
        out.end('event: error\ndata: {"error":"the event store is unavailable","code":17}\n\n');
      },
    });
    const heartbeat = setInterval(() => out.write(': heartbeat\n\n'), HEARTBEAT_MS);
    const finish = () => {
      clearInterval(heartbeat);
      follower.close();
      open.delete(out);
      const left = (byPrincipal.get(principal) ?? 1) - 1;
      if (left > 0) byPrincipal.set(principal, left);
      else byPrincipal.delete(principal);
    };
    out.once('close', finish);
    reply.raw.once('close', () => out.destroy());
    return reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      // nginx passes the events on as they come rather than buffering them (deploy/nginx.conf says so too).
      .header('x-accel-buffering', 'no')
      .send(out);
  });
  // A draining server waits for the requests in flight: a feed never ends by itself, so end them.
  const endFeeds = () => {
    for (const out of open) out.end();
  };
  process.once('SIGTERM', endFeeds);
  process.once('SIGINT', endFeeds);
  fastify.addHook('onClose', async () => {
    process.off('SIGTERM', endFeeds);
    process.off('SIGINT', endFeeds);
    endFeeds();
    await live.close();
  });
  return live;
}

function startingRevision(request: FastifyRequest): number | undefined {
  const lastEventId = request.headers['last-event-id'];
  const query = (request.query ?? {}) as Record<string, unknown>;
  const raw = typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : query.after;
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^-?\d{1,15}$/.test(raw) || Number(raw) < -1) {
    throw invalidInput(`after (or Last-Event-ID) must be a revision: an integer >= -1, got '${String(raw)}'`);
  }
  return Number(raw);
}
