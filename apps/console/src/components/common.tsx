import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, asApiError } from '../api/client';

export interface Async<T> {
  data?: T;
  error?: ApiError;
  loading: boolean;
  reload: () => void;
}

const sameDeps = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((d, i) => Object.is(d, b[i]));

/**
 * Runs `load` when `deps` change (a newer run wins), on `reload` and when `refresh` changes. A
 * reload or refresh keeps what was shown until the new answer comes, also when it fails; new deps
 * start afresh, from the very render that brings them: an answer for other deps is never shown
 * beside them, not even until the effect runs.
 */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], refresh: unknown = 0): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean; deps: unknown[] }>({ loading: true, deps });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => (sameDeps(s.deps, deps) ? { ...s, loading: true } : { loading: true, deps }));
    load(abort.signal).then(
      (data) => !abort.signal.aborted && setState({ data, loading: false, deps }),
      (e: unknown) => !abort.signal.aborted && setState((s) => ({ ...s, error: asApiError(e), loading: false })),
    );
    return () => abort.abort();
  }, [...deps, tick, refresh]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  if (!sameDeps(state.deps, deps)) return { loading: true, reload };
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function ErrorNote({ error, what }: { error?: ApiError; what?: string }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {what ? `${what}: ` : ''}
      {error.describe()}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A time as the person's locale writes it, with the exact ISO time on hover. */
export function When({ at }: { at: string | number }) {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{String(at)}</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {date.toLocaleString()}
    </time>
  );
}

export function Status({ status }: { status: string }) {
  const s = status.toLowerCase();
  const tone = s === 'succeeded' || s === 'ready' ? 'ok' : s === 'failed' ? 'bad' : s === 'canceled' ? 'muted' : 'busy';
  return <span class={`badge ${tone}`}>{status}</span>;
}

export function bytes(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/**
 * A confirmation in a modal dialog (the browser's own <dialog>: focus stays inside, Escape
 * cancels). `typed`, when given, must be typed exactly before the action can run.
 */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  typed?: string;
  open: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState('');
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      setText('');
      dialog.showModal();
    } else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  const ready = props.typed === undefined || text === props.typed;
  return (
    <dialog ref={ref} aria-labelledby="confirm-title" onCancel={(e) => (e.preventDefault(), props.onCancel())}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ready && !props.busy) props.onConfirm();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        {props.children}
        {props.typed !== undefined && (
          <label>
            Type <code>{props.typed}</code> to confirm
            <input value={text} onInput={(e) => setText(e.currentTarget.value)} autoComplete="off" />
          </label>
        )}
        <div class="row">
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={!ready || props.busy}>
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** The outcome of an action: what the API answered, or its refusal as it gave it. */
export function Outcome({ ok, error }: { ok?: string; error?: ApiError }) {
  if (error) return <ErrorNote error={error} what="Refused" />;
  if (ok)
    return (
      <p class="ok" role="status">
        {ok}
      </p>
    );
  return null;
}

/** Runs one action at a time and keeps its outcome. */
export function useAction() {
  const [state, setState] = useState<{ busy: boolean; ok?: string; error?: ApiError }>({ busy: false });
  const run = useCallback(async (work: () => Promise<string>) => {
    setState({ busy: true });
    try {
      setState({ busy: false, ok: await work() });
      return true;
    } catch (e) {
      setState({ busy: false, error: asApiError(e) });
      return false;
    }
  }, []);
  return { ...state, run, clear: () => setState({ busy: false }) };
}
