import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { ErrorNote, Loading, Outcome, useAction, useAsync } from '../components/common';
import { namespaceHref, tableHref } from '../routes';
import { useSession } from '../session-context';

export type Securable = { database: true } | { namespace: string[] } | { table: string[] };
type Grantee = { principal: string } | { role: string };
interface Grant {
  grantee: Grantee;
  securable: Securable;
  level: 'read' | 'write' | 'admin';
}

const nameOf = (s: Securable) => ('database' in s ? 'the database' : 'namespace' in s ? `namespace ${s.namespace.join('.')}` : `table ${s.table.join('.')}`);
const granteeText = (g: Grantee) => ('principal' in g ? `principal ${g.principal}` : `role ${g.role}`);
const sameSecurable = (a: Securable, b: Securable) => JSON.stringify(a) === JSON.stringify(b);

function SecurableLink({ s }: { s: Securable }) {
  if ('database' in s) return <Link href="/">the database</Link>;
  if ('namespace' in s) return <Link href={namespaceHref(s.namespace)}>{`namespace ${s.namespace.join('.')}`}</Link>;
  return <Link href={tableHref(s.table)}>{`table ${s.table.join('.')}`}</Link>;
}

/**
 * Who holds what on one securable, and where it comes from (a grant on it, or on the database or a
 * namespace above it); as of a past time when one is chosen. Admins of it grant and revoke here.
 */
export function GrantsPage({ securable }: { securable: Securable }) {
  const { api, who } = useSession();
  const [tick, setTick] = useState(0);
  const [asOf, setAsOf] = useState('');
  const at = asOf ? new Date(asOf).toISOString() : undefined;
  const query = 'database' in securable ? {} : 'namespace' in securable ? { namespace: securable.namespace.join('$') } : { table: securable.table.join('$') };
  const grants = useAsync(
    async (signal) => {
      const all: Grant[] = [];
      let token: string | undefined;
      do {
        const page = await api.get<{ grants: Grant[]; page_token: string | null }>('/v1/grants', { ...query, limit: 1000, page_token: token, at }, signal);
        all.push(...page.grants);
        token = page.page_token ?? undefined;
      } while (token && all.length < 100_000);
      return all;
    },
    [api, JSON.stringify(query), at],
    tick,
  );
  // Whether the signed-in principal administers the securable: the server says, as it judges grants.
  const mine = useAsync(
    () => api.post<{ level: string }>('/v1/grants/check', { principal: who.principal, roles: who.roles ?? [], ...('database' in securable ? { namespace: [] } : securable) }),
    [api, JSON.stringify(securable)],
    tick,
  );
  const admin = mine.data?.level === 'admin' && !at;
  return (
    <section aria-labelledby="grants-title">
      <h1 id="grants-title">Grants on {nameOf(securable)}</h1>
      <p>
        Your level here: <strong data-testid="my-level">{mine.data?.level ?? '…'}</strong>
      </p>
      <form class="row" onSubmit={(e) => e.preventDefault()}>
        <label>
          As of{' '}
          <input type="datetime-local" step="1" aria-label="As of" value={asOf} onInput={(e) => setAsOf(e.currentTarget.value)} />
        </label>
        {asOf && (
          <button type="button" onClick={() => setAsOf('')}>
            Now
          </button>
        )}
      </form>
      {grants.loading && !grants.data && <Loading what="grants" />}
      <ErrorNote error={grants.error} />
      {grants.data && (
        <table class="grid" data-testid="grants">
          <caption>
            {grants.data.length} grants reach {nameOf(securable)}
            {at ? ` as of ${at}` : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Grantee</th>
              <th scope="col">Level</th>
              <th scope="col">From</th>
              {admin && <th scope="col">Revoke</th>}
            </tr>
          </thead>
          <tbody>
            {grants.data.map((g) => (
              <tr key={JSON.stringify(g)}>
                <th scope="row">{granteeText(g.grantee)}</th>
                <td>{g.level}</td>
                <td>{sameSecurable(g.securable, securable) ? 'this' : <SecurableLink s={g.securable} />}</td>
                {admin && <td>{sameSecurable(g.securable, securable) && <Revoke grant={g} onDone={() => setTick((t) => t + 1)} />}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {admin && <GrantForm securable={securable} onDone={() => setTick((t) => t + 1)} />}
    </section>
  );
}

function Revoke({ grant, onDone }: { grant: Grant; onDone: () => void }) {
  const { api } = useSession();
  const action = useAction();
  return (
    <>
      <button
        type="button"
        disabled={action.busy}
        aria-label={`Revoke ${grant.level} of ${granteeText(grant.grantee)}`}
        onClick={() =>
          void action.run(async () => {
            await api.post('/v1/grants/revoke', grant);
            onDone();
            return 'Revoked.';
          })
        }
      >
        Revoke
      </button>
      <Outcome error={action.error} />
    </>
  );
}

function GrantForm({ securable, onDone }: { securable: Securable; onDone: () => void }) {
  const { api } = useSession();
  const [kind, setKind] = useState<'principal' | 'role'>('principal');
  const [name, setName] = useState('');
  const [level, setLevel] = useState<Grant['level']>('read');
  const action = useAction();
  return (
    <details class="action" open>
      <summary>Grant on {nameOf(securable)}</summary>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const grantee = (kind === 'principal' ? { principal: name.trim() } : { role: name.trim() }) as Grantee;
          void action.run(async () => {
            const answer = await api.post<{ transaction_id?: string }>('/v1/grants/create', { grantee, securable, level });
            setName('');
            onDone();
            return answer.transaction_id ? `Granted (transaction ${answer.transaction_id}).` : 'Already granted.';
          });
        }}
      >
        <label>
          To{' '}
          <select aria-label="Grantee kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'principal' | 'role')}>
            <option value="principal">principal</option>
            <option value="role">role</option>
          </select>
        </label>
        <label>
          Name <input aria-label="Grantee name" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Level{' '}
          <select aria-label="Level" value={level} onChange={(e) => setLevel(e.currentTarget.value as Grant['level'])}>
            <option value="read">read</option>
            <option value="write">write</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Grant
        </button>
      </form>
      <Outcome ok={action.ok} error={action.error} />
    </details>
  );
}
