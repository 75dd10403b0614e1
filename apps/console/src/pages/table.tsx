import { useCallback, useMemo, useRef, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { Api, Schemas, pathId, unwrap } from '../api/client';
import { HistoryEvent, inScope, mergeEvents, scopedHistory } from '../api/history';
import { useLiveHistory } from '../api/live';
import { ErrorNote, Loading, useAsync } from '../components/common';
import { LiveBadge } from '../components/live-badge';
import { encodeId, tableHref } from '../routes';
import { useSession } from '../session-context';
import { Breadcrumbs } from './browse';
import { Overview } from './table-overview';
import { BranchesTab } from './table-branches';
import { IndexesTab } from './table-indexes';
import { PreviewTab } from './table-preview';
import { TagsTab } from './table-tags';
import { VersionsTab } from './table-versions';

export interface VersionEntry {
  version: number;
  timestamp_millis?: number;
  manifest_size?: number;
}

/** What every tab of a table reads: loaded once, and again whenever a live event concerns the table. */
export interface TableData {
  id: string[];
  describe: Schemas['DescribeTableResponse'];
  versions: VersionEntry[];
  history: HistoryEvent[];
  historyCapped: boolean;
  tick: number;
  refresh: () => void;
}

const TABS: [string, string][] = [
  ['overview', 'Overview'],
  ['versions', 'Versions'],
  ['branches', 'Branches'],
  ['tags', 'Tags'],
  ['indexes', 'Indexes'],
  ['preview', 'Rows'],
];

export async function allVersions(api: Api, id: string[], branch?: string, signal?: AbortSignal): Promise<VersionEntry[]> {
  const versions: VersionEntry[] = [];
  let token: string | undefined;
  do {
    const page = await unwrap(
      api.lance.POST('/v1/table/{id}/version/list', { params: { path: { id: pathId(id) }, query: { limit: 1000, page_token: token, ...(branch ? { branch } : {}) } }, signal }),
    );
    versions.push(...(page.versions as VersionEntry[]));
    token = page.page_token ?? undefined;
  } while (token && versions.length < 100_000);
  return versions.sort((a, b) => a.version - b.version);
}

export function TablePage({ id, tab }: { id: string[]; tab: string }) {
  const { api } = useSession();
  const [tick, setTick] = useState(0);
  const refresh = useCallback(() => setTick((t) => t + 1), []);
  // A burst of commits reads the table again once, not once per event.
  const pending = useRef<ReturnType<typeof setTimeout>>();
  const refreshSoon = useCallback(() => {
    if (pending.current === undefined) pending.current = setTimeout(() => ((pending.current = undefined), refresh()), 250);
  }, [refresh]);
  const key = pathId(id);
  const [live, setLive] = useState<HistoryEvent[]>([]);
  const feed = useLiveHistory(api, (event) => {
    const mine = inScope({ kind: 'table', id }, event, uuids) || (event.type === 'TransactionAltered' && transactions.has(event.data.transactionId ?? ''));
    if (!mine) return;
    setLive((l) => [...l, event]);
    refreshSoon();
  });
  // The table's state is read again as events come; its history once, the feed adding to it.
  const state = useAsync(
    async (signal) => {
      const [describe, versions] = await Promise.all([
        unwrap(api.lance.POST('/v1/table/{id}/describe', { params: { path: { id: key } }, body: { load_detailed_metadata: true, with_table_uri: false, check_declared: false }, signal })),
        allVersions(api, id, undefined, signal),
      ]);
      return { describe, versions };
    },
    [api, key],
    tick,
  );
  const past = useAsync((signal) => (feed.ready ? scopedHistory(api, { kind: 'table', id }, signal) : new Promise<never>(() => undefined)), [api, key, feed.ready]);
  const history = useMemo(() => mergeEvents(past.data?.events ?? [], live), [past.data, live]);
  const uuids = useMemo(() => new Set(history.map((e) => e.data.tableUuid).filter((u): u is string => !!u)), [history]);
  const transactions = useMemo(() => new Set(history.map((e) => e.transaction_id)), [history]);
  const loaded = { data: state.data && past.data ? { ...state.data, history, historyCapped: past.data.capped } : undefined, error: state.error ?? past.error };
  const data: TableData | undefined = loaded.data && {
    id,
    ...loaded.data,
    history: history.filter((e) => e.type === 'TransactionAltered' || inScope({ kind: 'table', id }, e, uuids)),
    tick,
    refresh,
  };
  const name = id[id.length - 1];
  return (
    <article aria-labelledby="table-title">
      <Breadcrumbs id={id.slice(0, -1)} table={name} />
      <div class="row spread">
        <h1 id="table-title">{name}</h1>
        <span class="row">
          <LiveBadge state={feed.state} why={feed.why} />
          <Link href={`/history/table/${encodeId(id)}`}>Full history</Link>
          <Link href={`/grants/table/${encodeId(id)}`}>Grants</Link>
        </span>
      </div>
      <nav class="tabs" aria-label="Table sections">
        {TABS.map(([slug, label]) => (
          <Link key={slug} href={tableHref(id, slug)} aria-current={tab === slug ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {loaded.error && <ErrorNote error={loaded.error} what="The table could not be read" />}
      {!data && !loaded.error && <Loading what="the table" />}
      {data && (
        <div class="tab-body">
          {tab === 'overview' && <Overview data={data} />}
          {tab === 'versions' && <VersionsTab data={data} />}
          {tab === 'branches' && <BranchesTab data={data} />}
          {tab === 'tags' && <TagsTab data={data} />}
          {tab === 'indexes' && <IndexesTab data={data} />}
          {tab === 'preview' && <PreviewTab data={data} />}
        </div>
      )}
    </article>
  );
}
