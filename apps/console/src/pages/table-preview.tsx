import { useEffect, useState } from 'preact/hooks';
import { asApiError, ApiError, pathId, unwrap } from '../api/client';
import { Rows, rowsOfIpc } from '../api/arrow';
import { ErrorNote, Loading } from '../components/common';
import { useSession } from '../session-context';
import type { TableData } from './table';

/** The first rows (QueryTable, an Arrow IPC answer read in the browser), with a filter. */
export function PreviewTab({ data }: { data: TableData }) {
  const { api } = useSession();
  const [filter, setFilter] = useState('');
  const [limit, setLimit] = useState(20);
  const [state, setState] = useState<{ rows?: Rows; error?: ApiError; busy: boolean; ran: boolean }>({ busy: false, ran: false });
  const run = async (where: string) => {
    setState((s) => ({ ...s, busy: true }));
    try {
      const bytes = await unwrap(
        api.lance.POST('/v1/table/{id}/query', {
          params: { path: { id: pathId(data.id) } },
          body: { k: limit, vector: {}, ...(where.trim() ? { filter: where.trim() } : {}) },
          parseAs: 'arrayBuffer',
        }),
      );
      setState({ rows: rowsOfIpc(new Uint8Array(bytes as ArrayBuffer)), busy: false, ran: true });
    } catch (e) {
      setState({ error: asApiError(e), busy: false, ran: true });
    }
  };
  useEffect(() => {
    void run('');
  }, [pathId(data.id)]);
  return (
    <>
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void run(filter);
        }}
      >
        <label class="grow">
          Filter (SQL) <input value={filter} placeholder="e.g. id > 10 AND text LIKE 'a%'" onInput={(e) => setFilter(e.currentTarget.value)} />
        </label>
        <label>
          Rows{' '}
          <select aria-label="Rows" value={limit} onChange={(e) => setLimit(Number(e.currentTarget.value))}>
            {[10, 20, 50, 100].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={state.busy}>
          Show rows
        </button>
      </form>
      {state.busy && !state.rows && <Loading what="rows" />}
      <ErrorNote error={state.error} what="The query was refused" />
      {state.rows && (
        <div class="scroll">
          <table class="grid rows" data-testid="rows" aria-busy={state.busy}>
            <caption>
              {state.rows.rows.length} rows of version {data.describe.version}
            </caption>
            <thead>
              <tr>
                {state.rows.columns.map((c, i) => (
                  <th scope="col" key={c} title={state.rows!.types[i]}>
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {state.rows.rows.map((r, i) => (
                <tr key={i}>
                  {r.map((cell, j) => (
                    <td key={j}>{cell}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
