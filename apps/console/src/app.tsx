import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link, Route, Router, Switch, useLocation } from 'wouter-preact';
import { useHashLocation } from 'wouter-preact/use-hash-location';
import { ApiError, asApiError, createApi } from './api/client';
import { Credential, loadCredential, loadDatabase, saveCredential, saveDatabase } from './api/session';
import { ErrorNote, Loading } from './components/common';
import { BrowsePage } from './pages/browse';
import { FeedPage } from './pages/feed';
import { GrantsPage } from './pages/grants';
import { HistoryPage } from './pages/history';
import { JobsPage } from './pages/jobs';
import { SignIn } from './pages/sign-in';
import { TablePage } from './pages/table';
import { SessionContext, WhoAmI, sessionOf } from './session-context';
import { decodeId } from './routes';

type Phase = { kind: 'checking' } | { kind: 'sign-in'; refused?: ApiError } | { kind: 'ready'; who: WhoAmI } | { kind: 'down'; error: ApiError };

export function App() {
  const [credential, setCredential] = useState<Credential | undefined>(loadCredential);
  const [database, setDatabase] = useState<string | undefined>(loadDatabase);
  const [phase, setPhase] = useState<Phase>({ kind: 'checking' });
  const [attempt, setAttempt] = useState(0);
  const api = useMemo(() => createApi(credential, database), [credential, database]);

  useEffect(() => {
    let live = true;
    setPhase({ kind: 'checking' });
    api.get<WhoAmI>('/v1/whoami').then(
      (who) => live && setPhase({ kind: 'ready', who }),
      (e: unknown) => {
        if (!live) return;
        const error = asApiError(e);
        if (error.status === 401) setPhase({ kind: 'sign-in', refused: credential ? error : undefined });
        else if (error.status === 403 && credential) setPhase({ kind: 'sign-in', refused: error });
        else setPhase({ kind: 'down', error });
      },
    );
    return () => {
      live = false;
    };
  }, [api, attempt]);

  const signIn = (c: Credential, db: string | undefined) => {
    saveCredential(c);
    if (db) saveDatabase(db);
    setCredential(c);
    setDatabase(db || database);
  };
  const signOut = () => {
    saveCredential(undefined);
    setCredential(undefined);
  };
  const chooseDatabase = (db: string) => {
    saveDatabase(db);
    setDatabase(db);
  };

  if (phase.kind === 'checking') return <Loading what="the console" />;
  if (phase.kind === 'down') {
    return (
      <main class="narrow" id="main">
        <h1>Lance catalog</h1>
        <ErrorNote error={phase.error} what={`The API refused to say who you are${database ? ` in database ${database}` : ''}`} />
        <div class="row">
          <button
            type="button"
            onClick={() => {
              if (!database) return setAttempt((a) => a + 1);
              saveDatabase(undefined);
              setDatabase(undefined);
            }}
          >
            {database ? 'Use the default database' : 'Try again'}
          </button>
          {credential && (
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          )}
        </div>
      </main>
    );
  }
  if (phase.kind === 'sign-in') return <SignIn refused={phase.refused} database={database} onSignIn={signIn} />;
  const session = sessionOf(api, phase.who);
  return (
    <SessionContext.Provider value={session}>
      <Router hook={useHashLocation}>
        <Shell who={phase.who} onSignOut={signOut} onDatabase={chooseDatabase} />
      </Router>
    </SessionContext.Provider>
  );
}

function Shell({ who, onSignOut, onDatabase }: { who: WhoAmI; onSignOut: () => void; onDatabase: (db: string) => void }) {
  const [location] = useLocation();
  const section = location.startsWith('/history') ? 'history' : location.startsWith('/jobs') ? 'jobs' : location.startsWith('/feed') ? 'feed' : 'browse';
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Lance catalog</span>
        <nav aria-label="Sections">
          <Link href="/" aria-current={section === 'browse' ? 'page' : undefined}>Browse</Link>
          <Link href="/history" aria-current={section === 'history' ? 'page' : undefined}>History</Link>
          <Link href="/jobs" aria-current={section === 'jobs' ? 'page' : undefined}>Jobs</Link>
          <Link href="/feed" aria-current={section === 'feed' ? 'page' : undefined}>Change feed</Link>
        </nav>
        <DatabasePicker who={who} onDatabase={onDatabase} />
        <span class="who" data-testid="who">
          {who.principal} · {who.level ?? (who.by_grants ? 'by grants' : 'no access')}
        </span>
        {who.authentication && (
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {who.level === null && !who.by_grants ? (
          <p class="error" role="alert">
            {who.principal} holds no access to database {who.database}. Choose another database above.
          </p>
        ) : (
          <Switch>
            <Route path="/">{() => <BrowsePage namespace={[]} />}</Route>
            <Route path="/ns/:id">{(p: { id: string }) => <BrowsePage key={p.id} namespace={decodeId(p.id)} />}</Route>
            <Route path="/table/:id/:tab?">{(p: { id: string; tab?: string }) => <TablePage key={p.id} id={decodeId(p.id)} tab={p.tab ?? 'overview'} />}</Route>
            <Route path="/history">{() => <HistoryPage key="database" scope={{ kind: 'database' }} />}</Route>
            <Route path="/history/namespace/:id">{(p: { id: string }) => <HistoryPage key={`n${p.id}`} scope={{ kind: 'namespace', id: decodeId(p.id) }} />}</Route>
            <Route path="/history/table/:id">{(p: { id: string }) => <HistoryPage key={`t${p.id}`} scope={{ kind: 'table', id: decodeId(p.id) }} />}</Route>
            <Route path="/history/transaction/:id">{(p: { id: string }) => <HistoryPage key={`x${p.id}`} scope={{ kind: 'transaction', id: decodeURIComponent(p.id) }} />}</Route>
            <Route path="/jobs">{() => <JobsPage />}</Route>
            <Route path="/feed">{() => <FeedPage />}</Route>
            <Route path="/grants">{() => <GrantsPage key="database" securable={{ database: true }} />}</Route>
            <Route path="/grants/ns/:id">{(p: { id: string }) => <GrantsPage key={`n${p.id}`} securable={{ namespace: decodeId(p.id) }} />}</Route>
            <Route path="/grants/table/:id">{(p: { id: string }) => <GrantsPage key={`t${p.id}`} securable={{ table: decodeId(p.id) }} />}</Route>
            <Route>
              <p>Nothing here. <Link href="/">Browse the catalog</Link>.</p>
            </Route>
          </Switch>
        )}
      </main>
    </>
  );
}

function DatabasePicker({ who, onDatabase }: { who: WhoAmI; onDatabase: (db: string) => void }) {
  const named = [...new Set([who.default_database, ...who.grants.map((g) => g.database).filter((d) => d !== '*'), who.database])].sort();
  const anyDatabase = who.grants.some((g) => g.database === '*');
  const [other, setOther] = useState('');
  return (
    <form
      class="database"
      onSubmit={(e) => {
        e.preventDefault();
        if (/^[A-Za-z0-9_-]{1,64}$/.test(other)) onDatabase(other);
      }}
    >
      <label>
        Database{' '}
        <select aria-label="Database" value={who.database} onChange={(e) => onDatabase(e.currentTarget.value)}>
          {named.map((d) => (
            <option key={d} value={d}>
              {d}
            </option>
          ))}
        </select>
      </label>
      {anyDatabase && (
        <label>
          <span class="visually-hidden">Another database</span>
          <input placeholder="other database" value={other} pattern="[A-Za-z0-9_\-]{1,64}" size={12} onInput={(e) => setOther(e.currentTarget.value)} />
        </label>
      )}
    </form>
  );
}
