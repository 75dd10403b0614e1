import { createParser } from 'eventsource-parser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, errorOf } from './client';
import { HistoryEvent } from './history';

export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'refused';

const RETRY_MS = 2_000;

/**
 * The database's live history (`/v1/history/live`): read with fetch rather than EventSource, since
 * EventSource cannot send the credential's header. A dropped feed is opened again after the last
 * event received (Last-Event-ID), so no event is missed or repeated. `onHead` gets the head
 * revision the server saw when the feed opened; `onEvent` every event after it, in order.
 */
export function followHistory(
  api: Api,
  handlers: { onHead?: (revision: number) => void; onEvent: (event: HistoryEvent) => void; onState?: (state: LiveState, why?: string) => void },
): () => void {
  const abort = new AbortController();
  let lastId: string | undefined;
  let stopped = false;
  const run = async () => {
    while (!stopped) {
      try {
        handlers.onState?.(lastId === undefined ? 'connecting' : 'reconnecting');
        const res = await fetch('/v1/history/live', {
          headers: { ...api.headers, accept: 'text/event-stream', ...(lastId !== undefined ? { 'last-event-id': lastId } : {}) },
          signal: abort.signal,
          cache: 'no-store',
        });
        if (!res.ok || !res.body) {
          const error = await errorOf(res);
          // A refused credential or level does not get better by asking again.
          if (res.status === 401 || res.status === 403) {
            handlers.onState?.('refused', error.describe());
            return;
          }
          throw error;
        }
        handlers.onState?.('live');
        const parser = createParser({
          onEvent: (message) => {
            if (message.event === 'head') {
              if (lastId === undefined) handlers.onHead?.((JSON.parse(message.data) as { revision: number }).revision);
            } else if (message.event === 'catalog') {
              lastId = message.id;
              handlers.onEvent(JSON.parse(message.data) as HistoryEvent);
            }
          },
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch {
        if (stopped) return;
      }
      if (stopped) return;
      handlers.onState?.('reconnecting');
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  };
  void run();
  return () => {
    stopped = true;
    abort.abort();
  };
}

/** The feed as a hook: its state, with the handlers always the latest ones given. */
export function useLiveHistory(api: Api, onEvent: (event: HistoryEvent) => void, onHead?: (revision: number) => void): { state: LiveState; why?: string } {
  const [state, setState] = useState<{ state: LiveState; why?: string }>({ state: 'connecting' });
  const latest = useRef({ onEvent, onHead });
  latest.current = { onEvent, onHead };
  useEffect(
    () =>
      followHistory(api, {
        onEvent: (e) => latest.current.onEvent(e),
        onHead: (r) => latest.current.onHead?.(r),
        onState: (s, why) => setState({ state: s, why }),
      }),
    [api],
  );
  return state;
}
