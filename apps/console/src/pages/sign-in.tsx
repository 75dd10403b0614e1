import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { Credential } from '../api/session';
import { ErrorNote } from '../components/common';

/** Asks for an API key or a bearer token; it is kept for this tab only (sessionStorage). */
export function SignIn({ refused, database, onSignIn }: { refused?: ApiError; database?: string; onSignIn: (c: Credential, database: string | undefined) => void }) {
  const [kind, setKind] = useState<Credential['kind']>('api-key');
  const [secret, setSecret] = useState('');
  const [db, setDb] = useState(database ?? '');
  return (
    <main class="narrow" id="main">
      <h1>Sign in to the Lance catalog</h1>
      <p class="muted">The credential stays in this tab only and is sent to this server alone.</p>
      <ErrorNote error={refused} what="The credential was refused" />
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (secret.trim()) onSignIn({ kind, secret: secret.trim() }, db.trim() || undefined);
        }}
      >
        <fieldset>
          <legend>Credential</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'api-key'} onChange={() => setKind('api-key')} /> API key
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'bearer'} onChange={() => setKind('bearer')} /> Bearer token (JWT)
          </label>
        </fieldset>
        <label>
          {kind === 'api-key' ? 'API key' : 'Bearer token'}
          <input type="password" value={secret} autoComplete="off" required onInput={(e) => setSecret(e.currentTarget.value)} />
        </label>
        <label>
          Database <span class="muted">(optional: the server's default otherwise)</span>
          <input value={db} pattern="[A-Za-z0-9_\-]{1,64}" onInput={(e) => setDb(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
