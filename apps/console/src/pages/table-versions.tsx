import { useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { Api, Schemas, asApiError, ApiError, pathId, unwrap } from '../api/client';
import { HistoryEvent, principalOf } from '../api/history';
import { ConfirmDialog, ErrorNote, Outcome, When, bytes, useAction } from '../components/common';
import { transactionHistoryHref } from '../routes';
import { useSession } from '../session-context';
import type { TableData, VersionEntry } from './table';
import { typeText } from './table-overview';

/** What made a version: the commit's event and, for the server's own writes, the change that carried it. */
export interface VersionStory {
  version: number;
  at?: number;
  size?: number;
  commit?: HistoryEvent;
  change?: HistoryEvent;
}

export function versionStories(versions: VersionEntry[], history: HistoryEvent[]): VersionStory[] {
  const commits = new Map<number, HistoryEvent>();
  const changes = new Map<number, HistoryEvent>();
  for (const e of history) {
    if (e.data.branch) continue;
    if ((e.type === 'TableVersionCreated' || e.type === 'TableRegistered') && typeof e.data.version === 'number') commits.set(e.data.version, e);
    if ((e.type === 'TableDataChanged' || e.type === 'TableRestored') && typeof e.data.version === 'number') changes.set(e.data.version, e);
  }
  return versions
    .map((v) => ({ version: v.version, at: v.timestamp_millis, size: v.manifest_size, commit: commits.get(v.version), change: changes.get(v.version) }))
    .sort((a, b) => b.version - a.version);
}

function who(story: VersionStory): string {
  // The server's own Lance client commits a caller's write as catalog-service: the caller is on the change.
  return story.change ? principalOf(story.change) : story.commit ? principalOf(story.commit) : 'unknown';
}

function how(story: VersionStory): string {
  const c = story.change;
  if (c?.type === 'TableRestored') return `restore of version ${String(c.data.fromVersion)}`;
  if (c) return `${String(c.data.operation ?? c.operation)}${typeof c.data.rows === 'number' ? ` (${c.data.rows} rows)` : ''}`;
  return story.commit?.operation ?? '—';
}

export function VersionsTab({ data }: { data: TableData }) {
  const { can } = useSession();
  const stories = useMemo(() => versionStories(data.versions, data.history), [data.versions, data.history]);
  const numbers = stories.map((s) => s.version);
  return (
    <>
      <Compare data={data} versions={numbers} />
      <table class="grid timeline" data-testid="versions">
        <caption>
          Versions, newest first{data.historyCapped ? ' (history shown: the first 20,000 events)' : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">When</th>
            <th scope="col">By</th>
            <th scope="col">Operation</th>
            <th scope="col">Transaction</th>
            <th scope="col">Manifest</th>
            {can('write') && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {stories.map((s) => {
            const tx = s.change?.transaction_id ?? s.commit?.transaction_id;
            return (
              <tr key={s.version}>
                <th scope="row">{s.version}</th>
                <td>{s.at ? <When at={s.at} /> : '—'}</td>
                <td class="principal">{who(s)}</td>
                <td>{how(s)}</td>
                <td>{tx ? <Link href={transactionHistoryHref(tx)}>{tx.slice(0, 8)}</Link> : '—'}</td>
                <td>{bytes(s.size)}</td>
                {can('write') && <td>{s.version !== data.describe.version && <RestoreButton data={data} version={s.version} />}</td>}
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

/** RestoreTable (write): a new version with the content of an older one, after a confirmation. */
function RestoreButton({ data, version }: { data: TableData; version: number }) {
  const { api } = useSession();
  const [asking, setAsking] = useState(false);
  const action = useAction();
  return (
    <>
      <button type="button" onClick={() => setAsking(true)} aria-label={`Restore version ${version}`}>
        Restore…
      </button>
      <ConfirmDialog
        title={`Restore version ${version}?`}
        confirmLabel="Restore"
        open={asking}
        busy={action.busy}
        onCancel={() => setAsking(false)}
        onConfirm={() =>
          void action
            .run(async () => {
              const answer = await unwrap(api.lance.POST('/v1/table/{id}/restore', { params: { path: { id: pathId(data.id) } }, body: { version } }));
              data.refresh();
              return `Restored: transaction ${answer.transaction_id ?? '—'}`;
            })
            .finally(() => setAsking(false))
        }
      >
        <p>A new version is committed with the content of version {version}; the versions after it stay in the history.</p>
      </ConfirmDialog>
      <Outcome ok={action.ok} error={action.error} />
    </>
  );
}

interface Side {
  version: number;
  rows: number;
  fields: Schemas['JsonArrowField'][];
  fragments?: number;
}

async function sideOf(api: Api, id: string[], version: number): Promise<Side> {
  const [d, rows] = await Promise.all([
    unwrap(api.lance.POST('/v1/table/{id}/describe', { params: { path: { id: pathId(id) } }, body: { version, load_detailed_metadata: true, with_table_uri: false, check_declared: false } })),
    unwrap(api.lance.POST('/v1/table/{id}/count_rows', { params: { path: { id: pathId(id) } }, body: { version } })),
  ]);
  return { version, rows: Number(rows), fields: d.schema?.fields ?? [], fragments: d.stats?.num_fragments };
}

export interface SchemaChange {
  field: string;
  change: 'added' | 'removed' | 'changed';
  from?: string;
  to?: string;
}

export function schemaChanges(a: Schemas['JsonArrowField'][], b: Schemas['JsonArrowField'][]): SchemaChange[] {
  const before = new Map(a.map((f) => [f.name, f]));
  const after = new Map(b.map((f) => [f.name, f]));
  const out: SchemaChange[] = [];
  const describe = (f: Schemas['JsonArrowField']) => `${typeText(f.type)}${f.nullable ? '' : ' not null'}${Object.keys(f.metadata ?? {}).length ? ` ${JSON.stringify(f.metadata)}` : ''}`;
  for (const [name, f] of before) {
    const g = after.get(name);
    if (!g) out.push({ field: name, change: 'removed', from: describe(f) });
    else if (describe(f) !== describe(g)) out.push({ field: name, change: 'changed', from: describe(f), to: describe(g) });
  }
  for (const [name, g] of after) if (!before.has(name)) out.push({ field: name, change: 'added', to: describe(g) });
  return out;
}

/** Two versions side by side: schema changes, rows, and the writes recorded between them. */
function Compare({ data, versions }: { data: TableData; versions: number[] }) {
  const { api } = useSession();
  const [a, setA] = useState<number | undefined>(versions[1] ?? versions[0]);
  const [b, setB] = useState<number | undefined>(versions[0]);
  const [result, setResult] = useState<{ left: Side; right: Side; changes: SchemaChange[]; writes: HistoryEvent[] }>();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  if (versions.length < 2) return null;
  const compare = async () => {
    if (a === undefined || b === undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      const [left, right] = await Promise.all([sideOf(api, data.id, lo), sideOf(api, data.id, hi)]);
      const writes = data.history.filter(
        (e) => !e.data.branch && (e.type === 'TableDataChanged' || e.type === 'TableRestored' || e.type === 'TableVersionCreated') && typeof e.data.version === 'number' && e.data.version > lo && e.data.version <= hi,
      );
      setResult({ left, right, changes: schemaChanges(left.fields, right.fields), writes });
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const delta = result ? result.right.rows - result.left.rows : 0;
  return (
    <section class="compare" aria-labelledby="compare-title">
      <h2 id="compare-title">Compare two versions</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void compare();
        }}
      >
        <label>
          From{' '}
          <select aria-label="From" value={a} onChange={(e) => setA(Number(e.currentTarget.value))} data-testid="compare-from">
            {versions.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <label>
          To{' '}
          <select aria-label="To" value={b} onChange={(e) => setB(Number(e.currentTarget.value))} data-testid="compare-to">
            {versions.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Compare
        </button>
      </form>
      <ErrorNote error={error} />
      {result && (
        <div data-testid="comparison">
          <p>
            Version {result.left.version}: <strong>{result.left.rows.toLocaleString()}</strong> rows in {result.left.fragments ?? '?'} fragments; version{' '}
            {result.right.version}: <strong>{result.right.rows.toLocaleString()}</strong> rows in {result.right.fragments ?? '?'} fragments (
            <span data-testid="rows-delta">{delta >= 0 ? `+${delta}` : String(delta)} rows</span>).
          </p>
          {result.changes.length === 0 ? (
            <p>Same schema.</p>
          ) : (
            <ul class="changes" data-testid="schema-changes">
              {result.changes.map((c) => (
                <li key={c.field}>
                  <strong>{c.field}</strong> {c.change}
                  {c.from && (
                    <>
                      {' '}
                      from <code>{c.from}</code>
                    </>
                  )}
                  {c.to && (
                    <>
                      {' '}
                      to <code>{c.to}</code>
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
          {result.writes.length > 0 && (
            <ul class="changes">
              {result.writes.map((e) => (
                <li key={e.revision}>
                  version {String(e.data.version)}: {e.type === 'TableVersionCreated' ? 'commit' : String(e.data.operation ?? e.operation)}
                  {typeof e.data.rows === 'number' ? ` of ${e.data.rows} rows` : ''} by {principalOf(e)}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
