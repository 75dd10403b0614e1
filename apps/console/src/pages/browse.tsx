import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { pathId, unwrap } from '../api/client';
import { ErrorNote, Loading, Outcome, useAction, useAsync } from '../components/common';
import { namespaceHref, tableHref, encodeId } from '../routes';
import { useSession } from '../session-context';

const PAGE = 50;

/**
 * The page token that starts a list at the first name beginning with `prefix`: names are kept in
 * code-unit order and a page starts strictly after its token, so the token is the largest name
 * below the prefix that any real name could follow (its last unit one less, then U+FFFF).
 */
export function tokenBefore(prefix: string): string | undefined {
  if (prefix === '') return undefined;
  const last = prefix.charCodeAt(prefix.length - 1);
  return `${prefix.slice(0, -1)}${String.fromCharCode(last - 1)}\uffff`;
}

export function BrowsePage({ namespace }: { namespace: string[] }) {
  return (
    <div class="split">
      <aside aria-label="Namespaces">
        <h2 class="small">Namespaces</h2>
        <ul class="tree">
          <NamespaceNode id={[]} current={namespace} />
        </ul>
      </aside>
      <section aria-labelledby="ns-title">
        <Breadcrumbs id={namespace} />
        <h1 id="ns-title">{namespace.length ? namespace[namespace.length - 1] : 'Root namespace'}</h1>
        <p>
          <Link href={namespace.length ? `/history/namespace/${encodeId(namespace)}` : '/history'}>History of this {namespace.length ? 'namespace' : 'database'}</Link>
          {' · '}
          <Link href={namespace.length ? `/grants/ns/${encodeId(namespace)}` : '/grants'}>Grants on this {namespace.length ? 'namespace' : 'database'}</Link>
        </p>
        <CreateNamespace parent={namespace} />
        <TableList namespace={namespace} />
      </section>
    </div>
  );
}

export function Breadcrumbs({ id, table }: { id: string[]; table?: string }) {
  return (
    <nav aria-label="Breadcrumb" class="crumbs">
      <Link href="/">root</Link>
      {id.map((part, i) => (
        <span key={i}>
          {' / '}
          <Link href={namespaceHref(id.slice(0, i + 1))}>{part}</Link>
        </span>
      ))}
      {table !== undefined && <span> / {table}</span>}
    </nav>
  );
}

/** One namespace of the tree; its children are listed (a page at a time) when it is opened. */
function NamespaceNode({ id, current }: { id: string[]; current: string[] }) {
  const onPath = id.length <= current.length && id.every((p, i) => p === current[i]);
  const [open, setOpen] = useState(onPath);
  const selected = id.length === current.length && onPath;
  return (
    <li>
      <button type="button" class="twisty" aria-expanded={open} aria-label={`Namespaces in ${id.length ? id[id.length - 1] : 'root'}`} onClick={() => setOpen(!open)}>
        {open ? '▾' : '▸'}
      </button>
      <Link href={namespaceHref(id)} class={selected ? 'selected' : undefined} aria-current={selected ? 'page' : undefined}>
        {id.length ? id[id.length - 1] : 'root'}
      </Link>
      {open && <NamespaceChildren id={id} current={current} />}
    </li>
  );
}

function NamespaceChildren({ id, current }: { id: string[]; current: string[] }) {
  const { api } = useSession();
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  return (
    <ul>
      {pages.map((token, i) => (
        <NamespacePage key={token ?? ''} id={id} current={current} token={token} onMore={i === pages.length - 1 ? (next) => setPages([...pages, next]) : undefined} api={api} />
      ))}
    </ul>
  );
}

function NamespacePage({ id, current, token, onMore, api }: { id: string[]; current: string[]; token?: string; onMore?: (next: string) => void; api: ReturnType<typeof useSession>['api'] }) {
  const list = useAsync(
    (signal) => unwrap(api.lance.GET('/v1/namespace/{id}/list', { params: { path: { id: pathId(id) }, query: { limit: 100, page_token: token } }, signal })),
    [api, pathId(id), token],
  );
  if (list.loading) return <li class="muted">…</li>;
  if (list.error) return <li><ErrorNote error={list.error} /></li>;
  const next = list.data?.page_token;
  return (
    <>
      {list.data!.namespaces.map((name) => (
        <NamespaceNode key={name} id={[...id, name]} current={current} />
      ))}
      {next && onMore && (
        <li>
          <button type="button" class="link" onClick={() => onMore(next)}>
            more…
          </button>
        </li>
      )}
    </>
  );
}

/** The namespace's tables, a page at a time, from the first name starting with what is typed. */
function TableList({ namespace }: { namespace: string[] }) {
  const { api } = useSession();
  const [prefix, setPrefix] = useState('');
  // Tokens of the pages before the current one, so Previous goes back without reading again from the start.
  const [trail, setTrail] = useState<(string | undefined)[]>([]);
  const start = trail.length ? trail[trail.length - 1] : tokenBefore(prefix);
  const page = useAsync(
    (signal) =>
      unwrap(
        api.lance.GET('/v1/namespace/{id}/table/list', {
          params: { path: { id: pathId(namespace) }, query: { limit: PAGE, page_token: start } },
          signal,
        }),
      ),
    [api, pathId(namespace), start],
  );
  const names = (page.data?.tables ?? []).filter((n) => n.startsWith(prefix));
  // A page that ran past the prefix ends the matches.
  const next = names.length === (page.data?.tables.length ?? 0) ? page.data?.page_token ?? null : null;
  return (
    <section aria-labelledby="tables-title">
      <h2 id="tables-title">Tables</h2>
      <form role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Find tables whose name starts with{' '}
          <input
            type="search"
            value={prefix}
            onInput={(e) => {
              setPrefix(e.currentTarget.value);
              setTrail([]);
            }}
          />
        </label>
      </form>
      {page.loading && !page.data ? <Loading what="tables" /> : null}
      <ErrorNote error={page.error} />
      {page.data && (
        <>
          <ul class="tables" aria-busy={page.loading}>
            {names.map((name) => (
              <li key={name}>
                <Link href={tableHref([...namespace, name])}>{name}</Link>
              </li>
            ))}
          </ul>
          {names.length === 0 && <p class="muted">No table{prefix ? ` starts with “${prefix}”` : ' here'}.</p>}
          <div class="row pager">
            <button type="button" disabled={trail.length === 0} onClick={() => setTrail(trail.slice(0, -1))}>
              Previous page
            </button>
            <span class="muted">
              Page {trail.length + 1}
              {names.length ? ` · ${names[0]} … ${names[names.length - 1]}` : ''}
            </span>
            <button type="button" disabled={!next} onClick={() => next && setTrail([...trail, next])}>
              Next page
            </button>
          </div>
        </>
      )}
    </section>
  );
}

function CreateNamespace({ parent }: { parent: string[] }) {
  const { api, can } = useSession();
  const [name, setName] = useState('');
  const action = useAction();
  if (!can('admin')) return null;
  return (
    <details class="action">
      <summary>Create a namespace here</summary>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const id = [...parent, name.trim()];
          void action.run(async () => {
            const answer = await unwrap(api.lance.POST('/v1/namespace/{id}/create', { params: { path: { id: pathId(id) } }, body: {} }));
            setName('');
            return `Namespace ${id.join('.')} created (transaction ${answer.transaction_id ?? '—'}). Reload the tree to see it.`;
          });
        }}
      >
        <label>
          Name <input value={name} required onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Create
        </button>
      </form>
      <Outcome ok={action.ok} error={action.error} />
    </details>
  );
}
