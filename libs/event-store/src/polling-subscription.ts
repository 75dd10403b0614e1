import { ReadAllOptions, RecordedEvent, SubscribeOptions, Subscription } from './event-store.port';

/**
 * A live subscription over `readAll`: it pages through what is there, then waits for a wake-up or
 * `pollMs`, whichever comes first. A store that learns of new events (its own appends, or a
 * notification from elsewhere) calls every wake-up it keeps in `wakeUps`; polling covers the
 * appends it cannot hear of, such as another process's.
 */
export function pollingSubscription(
  readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
  wakeUps: Set<() => void>,
  timing: { page: number; pollMs: number },
  options: SubscribeOptions,
  onEvent: (event: RecordedEvent) => void | Promise<void>,
): Subscription {
  let after = options.afterPosition ?? 0n;
  let closed = false;
  let wake: () => void = () => undefined;
  const listener = () => wake();
  wakeUps.add(listener);
  const loop = async () => {
    while (!closed) {
      const batch = await readAll({ afterPosition: after, maxCount: timing.page }).catch(() => [] as RecordedEvent[]);
      for (const event of batch) {
        if (closed) return;
        await onEvent(event);
        after = event.position;
      }
      if (batch.length < timing.page && !closed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timing.pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  };
  const running = loop();
  return {
    close: async () => {
      closed = true;
      wakeUps.delete(listener);
      wake();
      await running.catch(() => undefined);
    },
  };
}
