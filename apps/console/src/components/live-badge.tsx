import type { LiveState } from '../api/live';

const LABEL: Record<LiveState, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  refused: 'live feed refused',
};

/** Whether new events are arriving: a dot and a word, read out when it changes. */
export function LiveBadge({ state, why }: { state: LiveState; why?: string }) {
  return (
    <span class={`live ${state}`} role="status" title={why} data-testid="live">
      <span aria-hidden="true">●</span> {LABEL[state]}
    </span>
  );
}
