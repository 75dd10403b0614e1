import { readFileSync } from 'node:fs';
import { RunningServer } from '../server';

export interface Sendable {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
}

export type Answer =
  | { kind: 'answered'; status: number; text: string; body: any; code: unknown; contentType: string; requestId?: string }
  /** No answer within the request's time. */
  | { kind: 'timeout' }
  /** The server stopped answering /healthz while the request was pending: its event loop is stuck. */
  | { kind: 'stalled' }
  | { kind: 'failed'; error: string }
  /** The client would not send it (a URL or header it cannot write): it never reached the server. */
  | { kind: 'unsendable'; error: string };

export interface Watch {
  /** How long the request may take. */
  timeoutMs: number;
  /** How long /healthz may stay unanswered while the request is pending. */
  stallMs?: number;
}

/**
 * Sends a request while watching the server: a request that blocks the server's event loop (a
 * decoder allocating without end) is given up once /healthz has gone unanswered for `stallMs`,
 * rather than waited on until the process dies.
 */
export async function send(url: string, r: Sendable, watch: Watch): Promise<Answer> {
  const abort = new AbortController();
  let stalled = false;
  let lastHealthy = Date.now();
  let probing = false;
  const watchdog = setInterval(() => {
    if (probing) return;
    probing = true;
    fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
      .then(
        (res) => res.status === 200,
        () => false,
      )
      .then((ok) => {
        probing = false;
        if (ok) lastHealthy = Date.now();
        else if (Date.now() - lastHealthy > (watch.stallMs ?? 10_000)) {
          stalled = true;
          abort.abort();
        }
      });
  }, 1000);
  try {
    const res = await fetch(url + r.path, {
      method: r.method,
      headers: r.headers,
      body: r.body,
      signal: AbortSignal.any([abort.signal, AbortSignal.timeout(watch.timeoutMs)]),
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const contentType = res.headers.get('content-type') ?? '';
    return { kind: 'answered', status: res.status, text, body, code: body?.code, contentType, requestId: res.headers.get('x-request-id') ?? undefined };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    if (stalled) return { kind: 'stalled' };
    if (err.name === 'TimeoutError') return { kind: 'timeout' };
    if (!err.cause) return { kind: 'unsendable', error: err.message };
    return { kind: 'failed', error: err.cause.code ?? err.cause.message ?? err.message };
  } finally {
    clearInterval(watchdog);
  }
}

/** Whether the server process still runs, answers /healthz, and how much memory it holds. */
export async function aliveness(server: RunningServer): Promise<{ healthy: boolean; exited: boolean; what: string }> {
  const pid = server.process.pid;
  const exited = () => server.process.exitCode !== null || server.process.signalCode !== null;
  const ended = () => ({ healthy: false, exited: true, what: `the server process ${pid} exited (${server.process.exitCode ?? server.process.signalCode})` });
  if (exited()) return ended();
  const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) }).then(
    (r) => r.status,
    () => 'no answer',
  );
  let rss = '';
  try {
    rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
  } catch {
    // gone meanwhile
  }
  if (exited()) return ended();
  const memory = rss ? `, resident memory ${Math.round(Number(rss) / 1024)} MB` : '';
  return { healthy: health === 200, exited: false, what: `the server process ${pid} is alive, /healthz: ${health}${memory}` };
}
