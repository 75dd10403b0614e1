/**
 * The credential the console sends, kept in sessionStorage: it lasts as long as the tab and is
 * never written anywhere else (no localStorage, no cookie).
 */
export type Credential = { kind: 'api-key' | 'bearer'; secret: string };

const CREDENTIAL = 'lance-console.credential';
const DATABASE = 'lance-console.database';

export function loadCredential(): Credential | undefined {
  try {
    const raw = sessionStorage.getItem(CREDENTIAL);
    if (!raw) return undefined;
    const parsed = JSON.parse(raw) as Credential;
    return (parsed.kind === 'api-key' || parsed.kind === 'bearer') && typeof parsed.secret === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function saveCredential(credential: Credential | undefined): void {
  if (credential) sessionStorage.setItem(CREDENTIAL, JSON.stringify(credential));
  else sessionStorage.removeItem(CREDENTIAL);
}

export function loadDatabase(): string | undefined {
  return sessionStorage.getItem(DATABASE) ?? undefined;
}

export function saveDatabase(database: string | undefined): void {
  if (database) sessionStorage.setItem(DATABASE, database);
  else sessionStorage.removeItem(DATABASE);
}

/** The headers every request of the session carries. */
export function sessionHeaders(credential: Credential | undefined, database: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credential?.kind === 'api-key') headers['x-api-key'] = credential.secret;
  if (credential?.kind === 'bearer') headers.authorization = `Bearer ${credential.secret}`;
  if (database) headers['x-lance-database'] = database;
  return headers;
}
