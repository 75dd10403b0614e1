import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { Schemas, pathId, unwrap } from '../api/client';
import { HistoryEvent, principalOf, scopedHistory } from '../api/history';
import { ConfirmDialog, ErrorNote, Outcome, When, bytes, useAction, useAsync } from '../components/common';
import { transactionHistoryHref } from '../routes';
import { useSession } from '../session-context';
import type { TableData } from './table';

type Field = Schemas['JsonArrowField'];

/** A JSON Arrow type as one line of text: `fixed_size_list<float32>[4]`, `struct<a: int32, b: utf8>`. */
export function typeText(type: Schemas['JsonArrowDataType']): string {
  const inner = type.fields?.length ? `<${type.fields.map((f) => (type.type === 'struct' ? `${f.name}: ${typeText(f.type)}` : typeText(f.type))).join(', ')}>` : '';
  return `${type.type}${inner}${type.length !== undefined ? `[${type.length}]` : ''}`;
}

export function SchemaTable({ fields, caption }: { fields: Field[]; caption: string }) {
  return (
    <table class="grid">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Type</th>
          <th scope="col">Nullable</th>
          <th scope="col">Metadata</th>
        </tr>
      </thead>
      <tbody>
        {fields.map((f) => (
          <tr key={f.name}>
            <th scope="row">{f.name}</th>
            <td>
              <code>{typeText(f.type)}</code>
            </td>
            <td>{f.nullable ? 'yes' : 'no'}</td>
            <td>
              {Object.entries(f.metadata ?? {}).map(([k, v]) => (
                <div key={k}>
                  <code>{k}</code> = <code>{v}</code>
                </div>
              ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The event that says who last changed the table and how. */
export function lastChange(history: HistoryEvent[]): HistoryEvent | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (history[i].type !== 'TransactionAltered') return history[i];
  return undefined;
}

export function Overview({ data }: { data: TableData }) {
  const { api } = useSession();
  const d = data.describe;
  const stats = useAsync((signal) => unwrap(api.lance.POST('/v1/table/{id}/stats', { params: { path: { id: pathId(data.id) } }, body: {}, signal })), [api, pathId(data.id)], data.tick);
  const last = lastChange(data.history);
  const s = stats.data;
  return (
    <>
      <dl class="facts">
        <dt>Latest version</dt>
        <dd data-testid="latest-version">{d.version ?? '—'}</dd>
        <dt>Rows</dt>
        <dd>{s ? s.num_rows.toLocaleString() : '…'}</dd>
        <dt>Size</dt>
        <dd>{s ? bytes(s.total_bytes) : '…'}</dd>
        <dt>Fragments</dt>
        <dd>
          {s
            ? `${s.fragment_stats.num_fragments} (${s.fragment_stats.num_small_fragments} small; rows per fragment ${s.fragment_stats.lengths.min}–${s.fragment_stats.lengths.max}, median ${s.fragment_stats.lengths.p50})`
            : '…'}
        </dd>
        <dt>Deleted rows</dt>
        <dd>{d.stats?.num_deleted_rows ?? '—'}</dd>
        <dt>Indexes</dt>
        <dd>{s ? s.num_indices : '…'}</dd>
        <dt>Versioning</dt>
        <dd>{d.managed_versioning ? 'managed by this catalog (every commit is an event)' : 'by the clients on storage'}</dd>
        <dt>Location</dt>
        <dd>
          <code>{d.location}</code>
        </dd>
        <dt>Last change</dt>
        <dd data-testid="last-change">
          {last ? (
            <>
              <strong>{last.operation}</strong> ({last.type}{last.data.branch ? ` on branch ${last.data.branch}` : ''}) by <strong>{principalOf(last)}</strong>, <When at={last.timestamp} />, transaction{' '}
              <Link href={transactionHistoryHref(last.transaction_id)}>{last.transaction_id.slice(0, 8)}</Link>
            </>
          ) : (
            '—'
          )}
        </dd>
      </dl>
      <ErrorNote error={stats.error} what="Statistics" />
      {Object.keys(d.properties ?? {}).length > 0 && (
        <table class="grid">
          <caption>Properties</caption>
          <tbody>
            {Object.entries(d.properties ?? {}).map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td>{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <SchemaTable fields={d.schema?.fields ?? []} caption="Schema" />
      {Object.keys(d.schema?.metadata ?? {}).length > 0 && (
        <table class="grid">
          <caption>Schema metadata</caption>
          <tbody>
            {Object.entries(d.schema?.metadata ?? {}).map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td>
                  <code>{v}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <DropTable data={data} />
    </>
  );
}

/** DropTable (admin), confirmed by typing the name; then when its files go, and how to bring it back until then. */
function DropTable({ data }: { data: TableData }) {
  const { api, can } = useSession();
  const [asking, setAsking] = useState(false);
  const [dropped, setDropped] = useState<{ location?: string; purgeAt?: number; transaction?: string }>();
  const action = useAction();
  const undo = useAction();
  if (!can('admin')) return null;
  const name = data.id[data.id.length - 1];
  return (
    <section class="danger-zone" aria-labelledby="drop-title">
      <h2 id="drop-title">Drop this table</h2>
      <p class="muted">The table leaves the catalog at once; its files stay until the retention period ends, and until then registering its location again brings it back.</p>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Drop table…
      </button>
      <ConfirmDialog
        title={`Drop ${name}?`}
        confirmLabel="Drop"
        typed={name}
        open={asking}
        busy={action.busy}
        onCancel={() => setAsking(false)}
        onConfirm={() =>
          void action
            .run(async () => {
              const answer = await unwrap(api.lance.POST('/v1/table/{id}/drop', { params: { path: { id: pathId(data.id) } } }));
              const tx = answer.transaction_id ?? undefined;
              let purgeAt: number | undefined;
              if (tx) {
                const events = await scopedHistory(api, { kind: 'transaction', id: tx }).catch(() => ({ events: [] as HistoryEvent[] }));
                purgeAt = events.events.find((e) => e.type === 'TablePurgeScheduled')?.data.purgeAfterMillis as number | undefined;
              }
              setDropped({ location: answer.location ?? undefined, purgeAt, transaction: tx });
              return `Dropped ${name} (transaction ${tx ?? '—'}).`;
            })
            .finally(() => setAsking(false))
        }
      >
        <p>
          Clients lose the table at once. Its files are deleted when the retention period (DROP_RETENTION_SECONDS) ends.
        </p>
      </ConfirmDialog>
      <Outcome ok={action.ok} error={action.error} />
      {dropped && (
        <div class="note" data-testid="dropped">
          <p>
            {dropped.purgeAt ? (
              <>
                Its files are purged after <When at={dropped.purgeAt} />.
              </>
            ) : (
              'Its files are kept (no purge was scheduled).'
            )}{' '}
            Until then it can be brought back by registering its location <code>{dropped.location}</code>.
          </p>
          <button
            type="button"
            disabled={undo.busy || !dropped.location}
            onClick={() =>
              void undo.run(async () => {
                await unwrap(api.lance.POST('/v1/table/{id}/register', { params: { path: { id: pathId(data.id) } }, body: { location: dropped.location! } }));
                data.refresh();
                return `${name} is back.`;
              })
            }
          >
            Undrop (register the location again)
          </button>
          <Outcome ok={undo.ok} error={undo.error} />
        </div>
      )}
    </section>
  );
}
