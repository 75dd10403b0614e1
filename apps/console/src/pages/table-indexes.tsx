import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { pathId, unwrap } from '../api/client';
import { ErrorNote, Loading, Outcome, Status, useAction, useAsync } from '../components/common';
import { transactionHistoryHref } from '../routes';
import { useSession } from '../session-context';
import { CancelJob } from './jobs';
import type { TableData } from './table';

const INDEX_TYPES = ['BTREE', 'BITMAP', 'LABEL_LIST', 'FTS', 'IVF_FLAT', 'IVF_PQ', 'IVF_HNSW_SQ', 'IVF_HNSW_PQ', 'HNSW'];

export function IndexesTab({ data }: { data: TableData }) {
  const { api, can } = useSession();
  const indexes = useAsync(
    (signal) => unwrap(api.lance.POST('/v1/table/{id}/index/list', { params: { path: { id: pathId(data.id) } }, body: {}, signal })),
    [api, pathId(data.id)],
    data.tick,
  );
  // The build transaction of each index the catalog was asked to build (clients' own builds have none).
  const builds = new Map<string, string>();
  for (const e of data.history) if (e.type === 'TableIndexRequested' && !e.data.branch) builds.set(String(e.data.indexName), e.transaction_id);
  return (
    <>
      {indexes.loading && !indexes.data && <Loading what="indexes" />}
      <ErrorNote error={indexes.error} />
      {indexes.data && indexes.data.indexes.length === 0 && <p class="muted">No indexes.</p>}
      {indexes.data && indexes.data.indexes.length > 0 && (
        <table class="grid" data-testid="indexes">
          <caption>Indexes and their builds</caption>
          <thead>
            <tr>
              <th scope="col">Index</th>
              <th scope="col">Columns</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Build</th>
            </tr>
          </thead>
          <tbody>
            {indexes.data.indexes.map((ix) => {
              const tx = builds.get(ix.index_name);
              const active = ix.status === 'queued' || ix.status === 'building';
              return (
                <tr key={ix.index_name} data-index={ix.index_name}>
                  <th scope="row">{ix.index_name}</th>
                  <td>{ix.columns.join(', ')}</td>
                  <td>{ix.index_type ?? '—'}</td>
                  <td>
                    <Status status={ix.status} />
                  </td>
                  <td>
                    {tx ? <Link href={transactionHistoryHref(tx)}>{tx.slice(0, 8)}</Link> : 'built by a client'}
                    {tx && <BuildDetail transaction={tx} tick={data.tick} />}
                    {tx && active && can('write') && <CancelJob transaction={tx} onDone={data.refresh} />}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {can('write') && <BuildIndex data={data} onDone={indexes.reload} />}
    </>
  );
}

/** The build transaction's progress and, when it failed, its reason. */
function BuildDetail({ transaction, tick }: { transaction: string; tick: number }) {
  const { api } = useSession();
  const tx = useAsync((signal) => unwrap(api.lance.POST('/v1/transaction/{id}/describe', { params: { path: { id: transaction } }, body: {}, signal })), [api, transaction], tick);
  const p = tx.data?.properties ?? {};
  const parts = [p.attempt && `attempt ${p.attempt}`, p.indexed_rows && `${p.indexed_rows} rows`, p.reason && `reason: ${p.reason}`].filter(Boolean);
  return parts.length ? <div class="muted small">{parts.join(' · ')}</div> : null;
}

function BuildIndex({ data, onDone }: { data: TableData; onDone: () => void }) {
  const { api } = useSession();
  const columns = (data.describe.schema?.fields ?? []).map((f) => f.name);
  const [column, setColumn] = useState(columns[0] ?? '');
  const [type, setType] = useState('BTREE');
  const [name, setName] = useState('');
  const action = useAction();
  return (
    <details class="action">
      <summary>Build an index</summary>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const answer = await unwrap(
              api.lance.POST('/v1/table/{id}/create_index', {
                params: { path: { id: pathId(data.id) } },
                body: { column, index_type: type, ...(name.trim() ? { name: name.trim() } : {}) },
              }),
            );
            onDone();
            data.refresh();
            const a = answer as { transaction_id?: string; index_name?: string };
            return `Index ${a.index_name ?? ''} queued: transaction ${a.transaction_id ?? '—'}. Its status follows here as the worker builds it.`;
          });
        }}
      >
        <label>
          Column{' '}
          <select aria-label="Column" value={column} onChange={(e) => setColumn(e.currentTarget.value)}>
            {columns.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Type{' '}
          <select aria-label="Type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {INDEX_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name <input value={name} placeholder="(default)" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Build index
        </button>
      </form>
      <Outcome ok={action.ok} error={action.error} />
    </details>
  );
}
