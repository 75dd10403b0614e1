import { Api, pathId } from './client';

/** One event of the audit log, as /v1/history/* answer it. */
export interface HistoryEvent {
  revision: number;
  type: string;
  timestamp: string;
  transaction_id: string;
  operation: string;
  context: Record<string, string>;
  principal?: string;
  data: EventData;
}

export interface EventData {
  table?: string[];
  newTable?: string[];
  tableUuid?: string;
  namespace?: string[];
  version?: number;
  branch?: string;
  transactionId?: string;
  status?: string;
  setProperties?: Record<string, string>;
  [key: string]: unknown;
}

interface HistoryPage {
  events: HistoryEvent[];
  page_token: string | null;
}

export interface DatabaseWindow {
  events: HistoryEvent[];
  head: number;
  before: number | null;
}

export type HistoryScope =
  | { kind: 'database' }
  | { kind: 'namespace'; id: string[] }
  | { kind: 'table'; id: string[] }
  | { kind: 'transaction'; id: string };

const SCOPED_ROUTES = {
  namespace: '/v1/history/namespace/{id}',
  table: '/v1/history/table/{id}',
  transaction: '/v1/history/transaction/{id}',
} as const;

/** At most this many events of one table, namespace or transaction are read (pages of 1,000). */
export const SCOPED_HISTORY_CAP = 20_000;

/** The whole history of a table, namespace or transaction, oldest first (up to SCOPED_HISTORY_CAP events). */
export async function scopedHistory(api: Api, scope: Exclude<HistoryScope, { kind: 'database' }>, signal?: AbortSignal): Promise<{ events: HistoryEvent[]; capped: boolean }> {
  const id = scope.kind === 'transaction' ? scope.id : pathId(scope.id);
  const path = SCOPED_ROUTES[scope.kind].replace('{id}', encodeURIComponent(id));
  const events: HistoryEvent[] = [];
  let token: string | null = null;
  do {
    const page: HistoryPage = await api.get<HistoryPage>(path, { limit: 1000, page_token: token ?? undefined }, signal);
    events.push(...page.events);
    token = page.page_token;
  } while (token !== null && events.length < SCOPED_HISTORY_CAP);
  return { events, capped: token !== null };
}

/** The `limit` events of the database before revision `before` (the newest without it). */
export function databaseWindow(api: Api, before: number | undefined, limit: number, signal?: AbortSignal): Promise<DatabaseWindow> {
  return api.get<DatabaseWindow>('/v1/history/database', { before, limit }, signal);
}

function sameId(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return !!a && a.length === b.length && a.every((p, i) => p === b[i]);
}

/**
 * Whether a live event belongs to the scope, by the rules the history routes apply: a table's
 * events by its uuids (across renames), a namespace's own events and its tables' lifecycle, a
 * transaction's events and the changes to it.
 */
export function inScope(scope: HistoryScope, event: HistoryEvent, tableUuids: ReadonlySet<string>): boolean {
  const d = event.data;
  switch (scope.kind) {
    case 'database':
      return true;
    case 'table':
      // As the table's history route: a job's progress (TransactionAltered) names the table but is its transaction's.
      if (event.type === 'TransactionAltered') return false;
      return (!!d.tableUuid && tableUuids.has(d.tableUuid)) || sameId(d.table, scope.id) || sameId(d.newTable, scope.id);
    case 'namespace': {
      if (d.namespace) return sameId(d.namespace, scope.id);
      const inside = (t?: string[]) => !!t && t.length === scope.id.length + 1 && sameId(t.slice(0, -1), scope.id);
      return event.type !== 'TableVersionCreated' && event.type !== 'TableVersionsDeleted' && event.type !== 'TransactionAltered' && (inside(d.table) || inside(d.newTable));
    }
    case 'transaction':
      return event.transaction_id === scope.id || (event.type === 'TransactionAltered' && d.transactionId === scope.id);
  }
}

/**
 * Who an event is from: its principal; without one (authentication off, or a worker inside the
 * server's own process) the origin its context names, else `anonymous`.
 */
export function principalOf(event: HistoryEvent): string {
  return event.principal ?? event.context?.origin ?? 'anonymous';
}

/** Events kept in revision order without repeats. */
export function mergeEvents(a: readonly HistoryEvent[], b: readonly HistoryEvent[]): HistoryEvent[] {
  const byRevision = new Map<number, HistoryEvent>();
  for (const e of a) byRevision.set(e.revision, e);
  for (const e of b) byRevision.set(e.revision, e);
  return [...byRevision.values()].sort((x, y) => x.revision - y.revision);
}
