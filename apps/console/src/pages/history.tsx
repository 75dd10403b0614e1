import { Fragment, type ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { asApiError, ApiError, unwrap } from '../api/client';
import { HistoryEvent, HistoryScope, databaseWindow, inScope, mergeEvents, principalOf, scopedHistory } from '../api/history';
import { useLiveHistory } from '../api/live';
import { ErrorNote, Loading, Status, When, useAsync } from '../components/common';
import { LiveBadge } from '../components/live-badge';
import { namespaceHref, tableHref, transactionHistoryHref } from '../routes';
import { useSession } from '../session-context';
import { CancelJob } from './jobs';

const WINDOW = 200;

function scopeTitle(scope: HistoryScope, database: string): string {
  switch (scope.kind) {
    case 'database':
      return `History of database ${database}`;
    case 'namespace':
      return `History of namespace ${scope.id.join('.')}`;
    case 'table':
      return `History of table ${scope.id.join('.')}`;
    case 'transaction':
      return `Transaction ${scope.id}`;
  }
}

export function HistoryPage({ scope }: { scope: HistoryScope }) {
  const { api, who } = useSession();
  const key = JSON.stringify(scope);
  const [older, setOlder] = useState<{ events: HistoryEvent[]; before: number | null }>({ events: [], before: null });
  const [olderError, setOlderError] = useState<ApiError>();
  const [live, setLive] = useState<HistoryEvent[]>([]);
  // Kept whole, and filtered to the scope when shown: the table's uuids are known only once its history is read.
  const feed = useLiveHistory(api, (event) => setLive((l) => [...l, event]));
  const loaded = useAsync(
    async (signal) => {
      if (!feed.ready) return new Promise<never>(() => undefined);
      setOlder({ events: [], before: null });
      if (scope.kind === 'database') {
        const w = await databaseWindow(api, undefined, WINDOW, signal);
        return { events: w.events, before: w.before, capped: false };
      }
      const h = await scopedHistory(api, scope, signal);
      return { events: h.events, before: null, capped: h.capped };
    },
    [api, key, feed.ready],
  );
  // A table's events are those of every table that carried its id: the uuids its history names,
  // and those of live events naming the id (a table made again under it).
  const uuids = useMemo(() => {
    const known = new Set((loaded.data?.events ?? []).map((e) => e.data.tableUuid).filter((u): u is string => !!u));
    for (const e of live) if (e.data.tableUuid && inScope(scope, e, known)) known.add(e.data.tableUuid);
    return known;
  }, [loaded.data, live, key]);
  const all = useMemo(
    () => mergeEvents(mergeEvents(older.events, loaded.data?.events ?? []), live.filter((e) => inScope(scope, e, uuids))),
    [older, loaded.data, live, uuids, key],
  );
  const before = older.events.length ? older.before : loaded.data?.before ?? null;
  const loadOlder = async () => {
    if (before === null) return;
    try {
      const w = await databaseWindow(api, before, WINDOW);
      setOlder((o) => ({ events: mergeEvents(w.events, o.events), before: w.before }));
    } catch (e) {
      setOlderError(asApiError(e));
    }
  };
  return (
    <article aria-labelledby="history-title">
      <div class="row spread">
        <h1 id="history-title">{scopeTitle(scope, who.database)}</h1>
        <LiveBadge state={feed.state} why={feed.why} />
      </div>
      {scope.kind === 'table' && (
        <p>
          <Link href={tableHref(scope.id)}>Open the table</Link>
        </p>
      )}
      {scope.kind === 'transaction' && <TransactionSummary id={scope.id} tick={all.length} />}
      {loaded.loading && !loaded.data && <Loading what="the history" />}
      <ErrorNote error={loaded.error} />
      {loaded.data && (
        <Timeline
          events={all}
          footer={
            scope.kind === 'database' && before !== null ? (
              <button type="button" onClick={() => void loadOlder()}>
                Load older events
              </button>
            ) : loaded.data.capped ? (
              <p class="muted">Only the first 20,000 events of this history are shown.</p>
            ) : null
          }
        />
      )}
      <ErrorNote error={olderError} />
    </article>
  );
}

/** DescribeTransaction: its status and properties, and a cancel for queued or running work. */
function TransactionSummary({ id, tick }: { id: string; tick: number }) {
  const { api, can } = useSession();
  const tx = useAsync((signal) => unwrap(api.lance.POST('/v1/transaction/{id}/describe', { params: { path: { id } }, body: {}, signal })), [api, id], tick);
  if (!tx.data) return <ErrorNote error={tx.error} />;
  const active = tx.data.status === 'Queued' || tx.data.status === 'Running';
  return (
    <section class="facts-box" data-testid="transaction">
      <p>
        Status: <Status status={tx.data.status} /> {active && can('write') && <CancelJob transaction={id} onDone={tx.reload} />}
      </p>
      <dl class="facts">
        {Object.entries(tx.data.properties ?? {}).map(([k, v]) => (
          <Fragment key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}

/** What an event is about, as a link where there is a page for it. */
function Subject({ event }: { event: HistoryEvent }) {
  const d = event.data;
  if (d.table) {
    return (
      <>
        <Link href={tableHref(d.table)}>{d.table.join('.')}</Link>
        {d.branch ? ` (branch ${d.branch})` : ''}
        {typeof d.version === 'number' ? ` v${d.version}` : ''}
      </>
    );
  }
  if (d.namespace) return <Link href={namespaceHref(d.namespace)}>{d.namespace.join('.') || 'root'}</Link>;
  if (d.transactionId) {
    return (
      <>
        <Link href={transactionHistoryHref(d.transactionId)}>transaction {d.transactionId.slice(0, 8)}</Link>
        {d.status ? ` → ${d.status}` : ''}
      </>
    );
  }
  return null;
}

const ALL = '';

export function Timeline({ events, footer }: { events: HistoryEvent[]; footer?: ComponentChildren }) {
  const [principal, setPrincipal] = useState(ALL);
  const [operation, setOperation] = useState(ALL);
  const [type, setType] = useState(ALL);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const options = (pick: (e: HistoryEvent) => string) => [...new Set(events.map(pick))].sort();
  const fromMs = from ? new Date(from).getTime() : -Infinity;
  const toMs = to ? new Date(to).getTime() : Infinity;
  const shown = events
    .filter(
      (e) =>
        (principal === ALL || principalOf(e) === principal) &&
        (operation === ALL || e.operation === operation) &&
        (type === ALL || e.type === type) &&
        new Date(e.timestamp).getTime() >= fromMs &&
        new Date(e.timestamp).getTime() <= toMs,
    )
    .reverse();
  const select = (label: string, value: string, set: (v: string) => void, values: string[]) => (
    <label>
      {label}{' '}
      <select aria-label={label} value={value} onChange={(e) => set(e.currentTarget.value)}>
        <option value={ALL}>any</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section aria-label="Events">
      <form class="row filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        {select('Principal', principal, setPrincipal, options(principalOf))}
        {select('Operation', operation, setOperation, options((e) => e.operation))}
        {select('Event', type, setType, options((e) => e.type))}
        <label>
          From <input type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To <input type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
      </form>
      <p class="muted" role="status">
        {shown.length} of {events.length} events, newest first
      </p>
      <ol class="timeline-list" data-testid="timeline">
        {shown.map((e) => (
          <EventItem key={e.revision} event={e} />
        ))}
      </ol>
      {footer}
    </section>
  );
}

function EventItem({ event }: { event: HistoryEvent }) {
  const [open, setOpen] = useState(false);
  return (
    <li class="event" data-revision={event.revision} data-type={event.type}>
      <div class="event-line">
        <button type="button" class="twisty" aria-expanded={open} aria-label={`Details of event ${event.revision}`} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        <When at={event.timestamp} />
        <strong class="type">{event.type}</strong>
        <span class="op">{event.operation}</span>
        <span class="principal">by {principalOf(event)}</span>
        <span class="subject">
          <Subject event={event} />
        </span>
        <Link href={transactionHistoryHref(event.transaction_id)} class="tx">
          tx {event.transaction_id.slice(0, 8)}
        </Link>
      </div>
      {open && <EventDetail event={event} />}
    </li>
  );
}

/** The event's data as recorded, and the other events of its transaction. */
function EventDetail({ event }: { event: HistoryEvent }) {
  const { api } = useSession();
  const others = useAsync((signal) => scopedHistory(api, { kind: 'transaction', id: event.transaction_id }, signal), [api, event.transaction_id]);
  return (
    <div class="event-detail">
      <p class="muted">
        revision {event.revision} · transaction <code>{event.transaction_id}</code>
        {Object.keys(event.context).length ? ` · context ${JSON.stringify(event.context)}` : ''}
      </p>
      <pre>{JSON.stringify(event.data, null, 2)}</pre>
      {others.data && others.data.events.length > 1 && (
        <>
          <h3 class="small">Other events of this transaction</h3>
          <ul>
            {others.data.events
              .filter((o) => o.revision !== event.revision)
              .map((o) => (
                <li key={o.revision}>
                  <When at={o.timestamp} /> {o.type} by {principalOf(o)} <Subject event={o} />
                </li>
              ))}
          </ul>
        </>
      )}
      <ErrorNote error={others.error} />
    </div>
  );
}
