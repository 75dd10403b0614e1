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

/**
 * The feed as a hook, with the handler always the latest one given. `ready` turns true once the
 * feed has opened (or was refused): a page reads what came before only then, so that the events
 * between its read and the feed's start are never missed (the feed starts at the head it reports
 * first, the read ends at or after it; events in both are the same revisions).
 */
export function useLiveHistory(api: Api, onEvent: (event: HistoryEvent) => void): { state: LiveState; why?: string; ready: boolean } {
  const [state, setState] = useState<{ state: LiveState; why?: string }>({ state: 'connecting' });
  const [opened, setOpened] = useState(false);
  const latest = useRef(onEvent);
  latest.current = onEvent;
  useEffect(
    () =>
      followHistory(api, {
        onEvent: (e) => latest.current(e),
        onHead: () => setOpened(true),
        onState: (s, why) => setState({ state: s, why }),
      }),
    [api],
  );
  return { ...state, ready: opened || state.state === 'refused' };
}
