import createClient from 'openapi-fetch';
import type { components, paths } from './lance-spec';
import { Credential, sessionHeaders } from './session';

export type Schemas = components['schemas'];
export type LanceClient = ReturnType<typeof createClient<paths>>;

/** A refusal from the API, with the Lance error code and the API's own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }

  /** One line for the person: status, the API's message and its code. */
  describe(): string {
    return `${this.status}${this.code !== undefined ? ` (code ${this.code})` : ''}: ${this.message}`;
  }
}

export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, undefined, error instanceof Error ? error.message : String(error));
}

/** Every call of one session: the typed Lance operations, and this server's own routes. */
export interface Api {
  lance: LanceClient;
  headers: Record<string, string>;
  database: string | undefined;
  get<T>(path: string, query?: Record<string, string | number | undefined>, signal?: AbortSignal): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

export function createApi(credential: Credential | undefined, database: string | undefined): Api {
  const headers = sessionHeaders(credential, database);
  const lance = createClient<paths>({ baseUrl: location.origin, headers });
  return {
    lance,
    headers,
    database,
    async get<T>(path: string, query: Record<string, string | number | undefined> = {}, signal?: AbortSignal) {
      const search = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) search.set(k, String(v));
      const q = search.toString();
      const res = await fetch(`${path}${q ? `?${q}` : ''}`, { headers, signal });
      if (!res.ok) throw await errorOf(res);
      return (await res.json()) as T;
    },
    async post<T>(path: string, body: unknown) {
      const res = await fetch(path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw await errorOf(res);
      return (await res.json()) as T;
    },
  };
}

export async function errorOf(res: Response): Promise<ApiError> {
  let body: { error?: unknown; code?: unknown } = {};
  try {
    body = (await res.clone().json()) as typeof body;
  } catch {
    // not JSON: the status says enough
  }
  return new ApiError(res.status, typeof body.code === 'number' ? body.code : undefined, typeof body.error === 'string' ? body.error : res.statusText || 'request failed');
}

/** openapi-fetch's answer, unwrapped: the data, or an ApiError thrown with the API's words. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) {
    const e = (error ?? {}) as { error?: unknown; code?: unknown };
    throw new ApiError(response.status, typeof e.code === 'number' ? e.code : undefined, typeof e.error === 'string' ? e.error : response.statusText || 'request failed');
  }
  return data as T;
}

/** A table or namespace id as the path carries it: parts joined by the delimiter (`$` when the id is the root). */
export function pathId(parts: readonly string[]): string {
  return parts.length === 0 ? '$' : parts.join('$');
}
