import { useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { unwrap } from '../api/client';
import { HistoryEvent, databaseWindow, mergeEvents, principalOf } from '../api/history';
import { useLiveHistory } from '../api/live';
import { ErrorNote, Loading, Outcome, Status, When, useAction, useAsync } from '../components/common';
import { LiveBadge } from '../components/live-badge';
import { tableHref, transactionHistoryHref } from '../routes';
import { useSession } from '../session-context';

/** How far back the jobs page reads the database's log. */
const JOBS_WINDOW = 2_000;

export interface Job {
  key: string;
  kind: 'index build' | 'backfill' | 'view refresh' | 'purge';
  transaction?: string;
  table?: string[];
  what: string;
  status: string;
  properties: Record<string, string>;
  requestedAt: string;
  updatedAt: string;
  by: string;
}

/** The worker jobs the events tell of, newest first, each with its latest status and properties. */
export function jobsOf(events: HistoryEvent[]): Job[] {
  const jobs = new Map<string, Job>();
  const start = (e: HistoryEvent, kind: Job['kind'], what: string) =>
    jobs.set(e.transaction_id, {
      key: e.transaction_id,
      kind,
      transaction: e.transaction_id,
      table: e.data.table,
      what,
      status: 'Queued',
      properties: {},
      requestedAt: e.timestamp,
      updatedAt: e.timestamp,
      by: principalOf(e),
    });
  for (const e of events) {
    const d = e.data;
    switch (e.type) {
      case 'TableIndexRequested':
        start(e, 'index build', `${String(d.indexName)} (${String(d.indexType)}) on ${(d.columns as string[] | undefined)?.join(', ') ?? ''}${d.branch ? `, branch ${d.branch}` : ''}`);
        break;
      case 'TableBackfillRequested':
        start(e, 'backfill', `column ${String(d.column)}${d.branch ? `, branch ${d.branch}` : ''}`);
        break;
      case 'MaterializedViewRefreshRequested':
        start(e, 'view refresh', d.sourceVersion !== undefined ? `from source version ${String(d.sourceVersion)}` : 'from the latest source version');
        break;
      case 'TransactionAltered': {
        const job = jobs.get(d.transactionId ?? '');
        if (!job) break;
        if (d.status) job.status = d.status;
        Object.assign(job.properties, d.setProperties ?? {});
        job.updatedAt = e.timestamp;
        break;
      }
      case 'TablePurgeScheduled':
        jobs.set(`purge:${d.tableUuid}`, {
          key: `purge:${d.tableUuid}`,
          kind: 'purge',
          transaction: e.transaction_id,
          table: d.table,
          what: `files of the dropped table, due ${new Date(d.purgeAfterMillis as number).toLocaleString()}`,
          status: 'Scheduled',
          properties: {},
          requestedAt: e.timestamp,
          updatedAt: e.timestamp,
          by: principalOf(e),
        });
        break;
      case 'TablePurged':
      case 'TablePurgeCanceled': {
        const job = jobs.get(`purge:${d.tableUuid}`);
        if (!job) break;
        job.status = e.type === 'TablePurged' ? 'Succeeded' : 'Canceled';
        job.properties = e.type === 'TablePurged' ? { files: String(d.files) } : { reason: String(d.reason) };
        job.updatedAt = e.timestamp;
        break;
      }
    }
  }
  return [...jobs.values()].reverse();
}

const FILTERS: [string, (j: Job) => boolean][] = [
  ['all', () => true],
  ['queued or running', (j) => ['Queued', 'Running', 'Scheduled'].includes(j.status)],
  ['failed', (j) => j.status === 'Failed'],
  ['finished', (j) => ['Succeeded', 'Canceled'].includes(j.status)],
];

export function JobsPage() {
  const { api } = useSession();
  const [live, setLive] = useState<HistoryEvent[]>([]);
  const feed = useLiveHistory(api, (e) => setLive((l) => [...l, e]));
  const loaded = useAsync(
    async (signal) => {
      if (!feed.ready) return new Promise<never>(() => undefined);
      const newest = await databaseWindow(api, undefined, 1000, signal);
      let events = newest.events;
      let before = newest.before;
      while (before !== null && events.length < JOBS_WINDOW) {
        const w = await databaseWindow(api, before, 1000, signal);
        events = mergeEvents(w.events, events);
        before = w.before;
      }
      return { events, complete: before === null };
    },
    [api, feed.ready],
  );
  const jobs = useMemo(() => jobsOf(mergeEvents(loaded.data?.events ?? [], live)), [loaded.data, live]);
  const [filter, setFilter] = useState('all');
  const keep = FILTERS.find(([name]) => name === filter)![1];
  return (
    <article aria-labelledby="jobs-title">
      <div class="row spread">
        <h1 id="jobs-title">Jobs</h1>
        <LiveBadge state={feed.state} why={feed.why} />
      </div>
      <p class="muted">
        Index builds, column backfills, view refreshes and purges of dropped tables requested in {loaded.data?.complete ? 'the whole log' : `the last ${JOBS_WINDOW.toLocaleString()} events`}, as the workers move them.
      </p>
      <div class="row" role="group" aria-label="Show">
        {FILTERS.map(([name]) => (
          <button key={name} type="button" aria-pressed={filter === name} onClick={() => setFilter(name)}>
            {name}
          </button>
        ))}
      </div>
      {loaded.loading && !loaded.data && <Loading what="jobs" />}
      <ErrorNote error={loaded.error} />
      {loaded.data && (
        <table class="grid" data-testid="jobs">
          <caption>{jobs.filter(keep).length} jobs</caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Table</th>
              <th scope="col">What</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Requested</th>
              <th scope="col">By</th>
            </tr>
          </thead>
          <tbody>
            {jobs.filter(keep).map((j) => (
              <tr key={j.key}>
                <th scope="row">{j.transaction ? <Link href={transactionHistoryHref(j.transaction)}>{j.kind}</Link> : j.kind}</th>
                <td>{j.table ? <Link href={tableHref(j.table)}>{j.table.join('.')}</Link> : '—'}</td>
                <td>{j.what}</td>
                <td>
                  <Status status={j.status} /> {j.kind !== 'purge' && (j.status === 'Queued' || j.status === 'Running') && <CancelJob transaction={j.transaction!} />}
                </td>
                <td class="small">
                  {Object.entries(j.properties)
                    .filter(([k]) => !['operation', 'started_at'].includes(k))
                    .map(([k, v]) => `${k}: ${v}`)
                    .join(' · ') || '—'}
                </td>
                <td>
                  <When at={j.requestedAt} />
                </td>
                <td>{j.by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

/** AlterTransaction setStatusAction Canceled (write): the worker stops at its next checkpoint. */
export function CancelJob({ transaction, onDone }: { transaction: string; onDone?: () => void }) {
  const { api, can } = useSession();
  const action = useAction();
  if (!can('write')) return null;
  return (
    <span class="cancel">
      <button
        type="button"
        disabled={action.busy}
        onClick={() =>
          void action.run(async () => {
            await unwrap(api.lance.POST('/v1/transaction/{id}/alter', { params: { path: { id: transaction } }, body: { actions: [{ setStatusAction: { status: 'Canceled' } }] } }));
            onDone?.();
            return 'Cancel requested.';
          })
        }
      >
        Cancel
      </button>
      <Outcome ok={action.ok} error={action.error} />
    </span>
  );
}
