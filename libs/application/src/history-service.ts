import { CallerAccess, CatalogError, CatalogState, Securable, ErrorCode, EventMetadata, ObjectId, TransactionState, displayId, evolve, invalidInput, sameId } from '@app/catalog';
import { EventStore, RecordedEvent } from '@app/event-store';
import { catalogStreamOf, envelopeOf } from '@app/projections';
import { unavailableAs503 } from './catalog-writer';
import { RequestContext } from './request-context';

const PAGE = 4096;

type Filter = (event: RecordedEvent) => boolean;

interface HistoryPage {
  pageToken?: string;
  limit?: number;
}

/**
 * The audit history of one object, read back from the log itself (not from a projection), so it
 * shows what happened in the order it was appended, with who and when.
 */
export class HistoryService {
  constructor(private readonly store: EventStore) {}

  /** Every event of every table that has ever carried this id, across renames, drops and re-creations. */
  async tableHistory(ctx: RequestContext, id: ObjectId, page: HistoryPage) {
    const uuids = new Set<string>();
    await this.scan(ctx, (e) => {
      const data = e.data as { table?: ObjectId; newTable?: ObjectId; tableUuid?: string };
      if (data.tableUuid && ((data.table && sameId(data.table, id)) || (data.newTable && sameId(data.newTable, id)))) {
        uuids.add(data.tableUuid);
      }
      return false;
    });
    const never = () => new CatalogError(ErrorCode.TableNotFound, `no table '${displayId(id, ctx.delimiter)}' was ever recorded`);
    if (uuids.size === 0) throw never();
    // A table that carried the name may have carried others, which the caller may not read: when
    // it may read none of what happened, the name answers as one never recorded.
    const visible = historyVisibleTo(ctx);
    const answer = await this.page(ctx, page, (e) => uuids.has((e.data as { tableUuid?: string }).tableUuid ?? '') && (!visible || visible(e)));
    if (visible && answer.events.length === 0 && !page.pageToken) throw never();
    return answer;
  }

  /** The namespace's own events and the lifecycle of the tables directly inside it (those the caller may read). */
  async namespaceHistory(ctx: RequestContext, id: ObjectId, page: HistoryPage) {
    const inside = (t?: ObjectId) => !!t && t.length === id.length + 1 && sameId(t.slice(0, -1), id);
    const visible = historyVisibleTo(ctx);
    const answer = await this.page(ctx, page, (e) => {
      if (visible && !visible(e)) return false;
      const data = e.data as { namespace?: ObjectId; table?: ObjectId; newTable?: ObjectId };
      if (data.namespace) return sameId(data.namespace, id);
      // A job's progress names its table, but belongs to its transaction's history, not the namespace's.
      return !NOT_A_TABLES_LIFECYCLE.has(e.type) && (inside(data.table) || inside(data.newTable));
    });
    if (answer.events.length === 0 && !page.pageToken && id.length > 0) {
      throw new CatalogError(ErrorCode.NamespaceNotFound, `no namespace '${displayId(id, ctx.delimiter)}' was ever recorded`);
    }
    return answer;
  }

  /** The events a transaction produced, and every later change to the transaction itself. */
  async transactionHistory(ctx: RequestContext, transactionId: string, page: HistoryPage) {
    const visible = historyVisibleTo(ctx);
    const answer = await this.page(
      ctx,
      page,
      (e) =>
        ((e.metadata as EventMetadata).transactionId === transactionId ||
          (e.type === 'TransactionAltered' && (e.data as { transactionId: string }).transactionId === transactionId)) &&
        (!visible || visible(e)),
    );
    if (answer.events.length === 0 && !page.pageToken) {
      throw new CatalogError(ErrorCode.TransactionNotFound, `transaction '${transactionId}' does not exist`);
    }
    return answer;
  }

  /**
   * A transaction as its events in the log make it, for one the state has forgotten (see
   * foldRecorded): they are folded alone into an empty state, which is enough for a transaction's
   * status and properties. Reads the whole stream: forgotten transactions are old ones.
   */
  async transactionFromLog(ctx: RequestContext, transactionId: string): Promise<TransactionState | undefined> {
    const state = new CatalogState();
    await this.scan(ctx, (e) => {
      const mine = (e.metadata as EventMetadata).transactionId === transactionId;
      if (mine || (e.type === 'TransactionAltered' && (e.data as { transactionId: string }).transactionId === transactionId)) evolve(state, envelopeOf(e));
      return false;
    });
    return state.transaction(transactionId);
  }

  /**
   * A window of the database's whole log, oldest first: the `limit` events before revision
   * `before` (by default the newest ones), read straight from the stream whatever its length.
   * `before` in the answer is what to pass for the window before this one; null at the start.
   */
  async databaseHistory(ctx: RequestContext, window: { before?: number; limit: number }) {
    const stream = catalogStreamOf(ctx.database);
    const head = await unavailableAs503(() => this.store.streamRevision(stream));
    const end = Math.min(window.before ?? head + 1, head + 1);
    const from = Math.max(0, end - window.limit);
    const batch = end > from ? await unavailableAs503(() => this.store.readStream(stream, { fromRevision: from, maxCount: end - from })) : [];
    const visible = historyVisibleTo(ctx);
    return { events: (visible ? batch.filter(visible) : batch).map(historyEntry), head, before: from > 0 ? from : null };
  }

  private async page(ctx: RequestContext, page: HistoryPage, keep: Filter) {
    let from = 0;
    if (page.pageToken !== undefined) {
      if (!/^\d+$/.test(page.pageToken)) throw invalidInput(`page_token '${page.pageToken}' is not a revision from an earlier page`);
      from = Number(page.pageToken) + 1;
    }
    const events: ReturnType<typeof historyEntry>[] = [];
    let more = false;
    await this.scan(
      ctx,
      (e) => {
        if (!keep(e)) return false;
        if (page.limit !== undefined && events.length === page.limit) {
          more = true;
          return true;
        }
        events.push(historyEntry(e));
        return false;
      },
      from,
    );
    return { events, page_token: more ? String(events[events.length - 1].revision) : null };
  }

  /** Reads the database's stream in pages; `visit` returning true stops the scan. */
  private async scan(ctx: RequestContext, visit: (e: RecordedEvent) => boolean, from = 0): Promise<void> {
    const stream = catalogStreamOf(ctx.database);
    for (;;) {
      const batch = await unavailableAs503(() => this.store.readStream(stream, { fromRevision: from, maxCount: PAGE }));
      for (const e of batch) if (visit(e)) return;
      if (batch.length < PAGE) return;
      from = batch[batch.length - 1].revision + 1;
      // The embedded store reads a page without leaving the event loop: other requests go between pages.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/**
 * Which events a caller whose grants decide its access may see: those of tables it may read (a
 * rename: both names; a purge: the live tables it names too), of namespaces it may read, grants on what it may read, and a transaction's
 * later changes once one of its events was seen (the filter keeps that memory, so one filter
 * serves one read of the log in order), or, for a job's, when the table they name may be read.
 */
export function eventsVisibleTo(sees: CallerAccess): (e: { type: string; data: unknown; metadata: unknown }) => boolean {
  const transactions = new Map<string, boolean>();
  return (e) => {
    if (SUBSCRIPTION_EVENTS.has(e.type)) return sees.rankOn({ database: true }) >= 3;
    const data = e.data as { table?: ObjectId; newTable?: ObjectId; namespace?: ObjectId; securable?: Securable; transactionId?: string; skipped?: Array<{ table: ObjectId }> };
    const transactionId = (e.metadata as EventMetadata | undefined)?.transactionId;
    let visible: boolean;
    // A job's progress names its table; another's change is seen with the events of its transaction seen before.
    if (e.type === 'TransactionAltered') visible = transactions.get(data.transactionId ?? '') ?? (data.table ? sees.readsTable(data.table) : false);
    else if (data.securable) visible = sees.rankOn(data.securable) >= 1;
    else if (data.table) {
      // A purge names the live tables it left alone: shown only with each of them readable.
      visible = sees.readsTable(data.table) && (!data.newTable || sees.readsTable(data.newTable)) && (data.skipped ?? []).every((s) => sees.readsTable(s.table));
    }
    else if (data.namespace) visible = sees.rankOn({ namespace: data.namespace }) >= 1;
    else visible = false;
    if (transactionId !== undefined && e.type !== 'TransactionAltered') transactions.set(transactionId, (transactions.get(transactionId) ?? true) && visible);
    return visible;
  };
}

/**
 * A webhook subscription's events carry its URL, which often holds a secret of its receiver: they
 * are shown to the database's admins only, as the subscriptions are (SubscriptionsList).
 */
const SUBSCRIPTION_EVENTS = new Set(['WebhookSubscriptionCreated', 'WebhookSubscriptionDeleted', 'WebhookSubscriptionPaused']);

const notSubscriptions = (e: { type: string }) => !SUBSCRIPTION_EVENTS.has(e.type);

/**
 * What of the log a caller is shown: what its grants let it read when they decide; otherwise all
 * of it, but for webhook subscriptions' events below admin on the database. Undefined: everything.
 */
export function historyVisibleTo(caller: { sees?: CallerAccess; principal?: string; level?: string }): ((e: { type: string; data: unknown; metadata: unknown }) => boolean) | undefined {
  if (caller.sees) return eventsVisibleTo(caller.sees);
  return caller.principal === undefined || caller.level === 'admin' ? undefined : notSubscriptions;
}

/** Events that name a table without being a step of its lifecycle: a namespace's history leaves them out. */
const NOT_A_TABLES_LIFECYCLE = new Set(['TableVersionCreated', 'TableVersionsDeleted', 'TransactionAltered']);

export type HistoryEntry = ReturnType<typeof historyEntry>;

/** An event as the history routes answer it. */
export function historyEntry(e: RecordedEvent) {
  const m = e.metadata as EventMetadata;
  return {
    revision: e.revision,
    type: e.type,
    timestamp: m.occurredAt ?? e.created.toISOString(),
    transaction_id: m.transactionId,
    operation: m.operation,
    context: m.context ?? {},
    ...(m.principal ? { principal: m.principal } : {}),
    data: e.data,
  };
}
