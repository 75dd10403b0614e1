import { ReadAllOptions, RecordedEvent, SubscribeOptions, Subscription } from './event-store.port';

/**
 * What a store tells its subscriptions when it learns of new events: nothing more (they read them),
 * or, for its own appends, the events themselves as it wrote them (shared: read-only).
 */
export type WakeUp = (appended?: readonly RecordedEvent[]) => void;

/**
 * A live subscription over `readAll`: it pages through what is there, then waits for a wake-up or
 * `pollMs`, whichever comes first. A store that learns of new events (its own appends, or a
 * notification from elsewhere) calls every wake-up it keeps in `wakeUps`; polling covers the
 * appends it cannot hear of, such as another process's. A wake-up carrying this process's own
 * appended events hands them over without reading them back, when they follow straight on from
 * the last event the subscription saw (positions are consecutive: nothing can lie between).
 */
export function pollingSubscription(
  readAll: (options: ReadAllOptions) => Promise<RecordedEvent[]>,
  wakeUps: Set<WakeUp>,
  timing: { page: number; pollMs: number },
  options: SubscribeOptions,
  onEvent: (event: RecordedEvent) => void | Promise<void>,
): Subscription {
  let after = options.afterPosition ?? 0n;
  let closed = false;
  let wake: () => void = () => undefined;
  let handed: readonly RecordedEvent[] | undefined;
  const listener: WakeUp = (appended) => {
    if (appended?.length && handed === undefined && appended[0].position === after + 1n) handed = appended;
    wake();
  };
  wakeUps.add(listener);
  const loop = async () => {
    while (!closed) {
      const ready = handed;
      handed = undefined;
      const batch = ready && ready[0].position === after + 1n ? ready : await readAll({ afterPosition: after, maxCount: timing.page }).catch(() => [] as RecordedEvent[]);
      for (const event of batch) {
        if (closed) return;
        await onEvent(event);
        after = event.position;
      }
      // Caught up as far as this process knows (its own events handed over, or a short page read):
      // wait for the next wake-up or poll.
      if ((batch === ready || batch.length < timing.page) && !closed && handed === undefined) {
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
