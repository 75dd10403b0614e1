import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api/client';

export type Level = 'read' | 'write' | 'admin';

/** GET /v1/whoami. */
export interface WhoAmI {
  principal: string;
  via: string;
  authentication: boolean;
  database: string;
  level: Level | null;
  default_database: string;
  grants: { database: string; level: Level }[];
  /** Whether grants in this database's log decide what the principal may do (its credential's level is short). */
  by_grants?: boolean;
  roles?: string[];
}

const RANK: Record<Level, number> = { read: 1, write: 2, admin: 3 };

export interface Session {
  api: Api;
  who: WhoAmI;
  /** Whether the credential's level in the current database allows `level`: what decides which actions are offered. */
  can(level: Level): boolean;
}

export function sessionOf(api: Api, who: WhoAmI): Session {
  // Where grants decide, the level differs from one object to the next: every action is offered and the server judges it.
  return { api, who, can: (level) => who.by_grants === true || (who.level !== null && RANK[who.level] >= RANK[level]) };
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('no session');
  return session;
}
