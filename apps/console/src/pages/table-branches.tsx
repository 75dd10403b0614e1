import { useState } from 'preact/hooks';
import { pathId, unwrap } from '../api/client';
import { ErrorNote, Loading, Outcome, When, useAction, useAsync } from '../components/common';
import { useSession } from '../session-context';
import { TableData, allVersions } from './table';

interface BranchInfo {
  name: string;
  parentBranch?: string;
  parentVersion: number;
  createAt?: number;
  versions: number[];
}

const STEP = 34;
const ROW = 44;
const LEFT = 70;

/** The table's lines of versions: main, then each branch below the line and version it started from. */
export function BranchesTab({ data }: { data: TableData }) {
  const { api, can } = useSession();
  const branches = useAsync(
    async (signal) => {
      const all: Record<string, { parentVersion?: number; parentBranch?: string; createAt?: number }> = {};
      let token: string | undefined;
      do {
        const page = (await unwrap(
          api.lance.POST('/v1/table/{id}/branches/list', { params: { path: { id: pathId(data.id) }, query: { page_token: token } }, signal }),
        )) as { branches: typeof all; page_token?: string | null };
        Object.assign(all, page.branches);
        token = page.page_token ?? undefined;
      } while (token);
      const names = Object.keys(all).sort();
      // Each branch's own versions, for the first 30 branches (the rest are listed without them).
      const versions = await Promise.all(names.map((n, i) => (i < 30 ? allVersions(api, data.id, n, signal).then((v) => v.map((x) => x.version)) : Promise.resolve([]))));
      return names.map((name, i): BranchInfo => ({ name, parentBranch: all[name].parentBranch, parentVersion: all[name].parentVersion ?? 0, createAt: all[name].createAt, versions: versions[i] }));
    },
    [api, pathId(data.id)],
    data.tick,
  );
  return (
    <>
      {branches.loading && !branches.data && <Loading what="branches" />}
      <ErrorNote error={branches.error} />
      {branches.data && <BranchTree main={data.versions.map((v) => v.version)} branches={branches.data} />}
      {branches.data && branches.data.length > 0 && (
        <table class="grid" data-testid="branches">
          <caption>Branches</caption>
          <thead>
            <tr>
              <th scope="col">Branch</th>
              <th scope="col">Started from</th>
              <th scope="col">Created</th>
              <th scope="col">Versions</th>
            </tr>
          </thead>
          <tbody>
            {branches.data.map((b) => (
              <tr key={b.name}>
                <th scope="row">{b.name}</th>
                <td>
                  {b.parentBranch ?? 'main'} version {b.parentVersion}
                </td>
                <td>{b.createAt ? <When at={b.createAt * 1000} /> : '—'}</td>
                <td>{b.versions.length ? b.versions.join(', ') : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {branches.data?.length === 0 && <p class="muted">No branches: every version is on main.</p>}
      {can('write') && <CreateBranch data={data} branches={branches.data?.map((b) => b.name) ?? []} onDone={branches.reload} />}
    </>
  );
}

function BranchTree({ main, branches }: { main: number[]; branches: BranchInfo[] }) {
  // Rows: main first, then each branch after the line it started from (depth first).
  const order: BranchInfo[] = [];
  const place = (parent: string | undefined) => {
    for (const b of branches.filter((x) => (x.parentBranch ?? undefined) === parent && !order.includes(x))) {
      order.push(b);
      place(b.name);
    }
  };
  place(undefined);
  for (const b of branches) if (!order.includes(b)) order.push(b);
  const rowOf = new Map<string | undefined, number>([[undefined, 0], ['main', 0]]);
  order.forEach((b, i) => rowOf.set(b.name, i + 1));
  // A version's column on its line: main's by position; a branch's continue from where it started.
  const columnOf = new Map<string, number>();
  main.forEach((v, i) => columnOf.set(`main@${v}`, i));
  const branchColumns = (b: BranchInfo): number[] => {
    const start = columnOf.get(`${b.parentBranch ?? 'main'}@${b.parentVersion}`) ?? 0;
    const cols = b.versions.map((_, i) => start + 1 + i);
    b.versions.forEach((v, i) => columnOf.set(`${b.name}@${v}`, cols[i]));
    return cols;
  };
  const lines = order.map((b) => ({ b, cols: branchColumns(b), from: columnOf.get(`${b.parentBranch ?? 'main'}@${b.parentVersion}`) ?? 0 }));
  const widest = Math.max(main.length, ...lines.map((l) => (l.cols.length ? l.cols[l.cols.length - 1] + 1 : l.from + 1)));
  const width = LEFT + widest * STEP + 120;
  const height = (order.length + 1) * ROW + 10;
  const x = (col: number) => LEFT + col * STEP;
  const y = (row: number) => 24 + row * ROW;
  const summary = `main with ${main.length} versions${order.length ? `; ${order.map((b) => `${b.name} from ${b.parentBranch ?? 'main'} version ${b.parentVersion}`).join('; ')}` : ''}`;
  return (
    <figure class="tree-figure">
      <svg width={width} height={height} role="img" aria-label={`Branch tree: ${summary}`} data-testid="branch-tree">
        <text x={4} y={y(0) + 4} class="line-label">
          main
        </text>
        {main.length > 1 && <line x1={x(0)} y1={y(0)} x2={x(main.length - 1)} y2={y(0)} class="edge" />}
        {main.map((v, i) => (
          <g key={v}>
            <circle cx={x(i)} cy={y(0)} r={7} class="dot main" />
            <text x={x(i)} y={y(0) - 11} class="version">
              {v}
            </text>
          </g>
        ))}
        {lines.map(({ b, cols, from }) => {
          const row = rowOf.get(b.name)!;
          const parentRow = rowOf.get(b.parentBranch) ?? 0;
          const end = cols.length ? cols[cols.length - 1] : from + 1;
          return (
            <g key={b.name}>
              <path d={`M ${x(from)} ${y(parentRow)} C ${x(from)} ${y(row)}, ${x(from)} ${y(row)}, ${x(from + 1)} ${y(row)} L ${x(end)} ${y(row)}`} class="edge branch" fill="none" />
              {b.versions.map((v, i) => (
                <g key={v}>
                  <circle cx={x(cols[i])} cy={y(row)} r={6} class="dot" />
                  <text x={x(cols[i])} y={y(row) - 10} class="version">
                    {v}
                  </text>
                </g>
              ))}
              <text x={x(end) + 12} y={y(row) + 4} class="line-label">
                {b.name}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

function CreateBranch({ data, branches, onDone }: { data: TableData; branches: string[]; onDone: () => void }) {
  const { api } = useSession();
  const [name, setName] = useState('');
  const [from, setFrom] = useState('main');
  const [version, setVersion] = useState<number | undefined>(data.describe.version);
  const action = useAction();
  return (
    <details class="action">
      <summary>Create a branch</summary>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            const answer = await unwrap(
              api.lance.POST('/v1/table/{id}/branches/create', {
                params: { path: { id: pathId(data.id) } },
                body: { name: name.trim(), ...(from !== 'main' ? { from_branch: from } : {}), ...(from === 'main' && version !== undefined ? { from_version: version } : {}) },
              }),
            );
            onDone();
            data.refresh();
            return `Branch ${name.trim()} created (transaction ${(answer as { transaction_id?: string }).transaction_id ?? '—'}).`;
          });
        }}
      >
        <label>
          Name <input value={name} required onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          From{' '}
          <select aria-label="From" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
            <option value="main">main</option>
            {branches.map((b) => (
              <option key={b} value={b}>
                {b} (latest)
              </option>
            ))}
          </select>
        </label>
        {from === 'main' && (
          <label>
            Version{' '}
            <select aria-label="Version" value={version} onChange={(e) => setVersion(Number(e.currentTarget.value))}>
              {[...data.versions].reverse().map((v) => (
                <option key={v.version} value={v.version}>
                  {v.version}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="submit" disabled={action.busy}>
          Create branch
        </button>
      </form>
      <Outcome ok={action.ok} error={action.error} />
    </details>
  );
}
