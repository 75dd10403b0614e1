import { EventStore, isOperatorStream } from '@app/event-store';
import { OrderedAppender } from './ordered-appender';

const PAGE = 5000;

/** Whether the store holds no event at all (the operator's stream included). */
export async function isEmpty(store: EventStore): Promise<boolean> {
  return (await store.readAll({ maxCount: 1 })).length === 0;
}

/**
 * Copies the source's events after `after` up to `upTo` (inclusive), in global order, to the target;
 * answers the position of the last event read. The operator's own stream stays with its store.
 */
export async function copyLog(
  source: EventStore,
  target: EventStore,
  range: { after?: bigint; upTo: bigint },
  onProgress: (copied: number) => void = () => undefined,
): Promise<{ lastPosition?: bigint; copied: number }> {
  const appender = new OrderedAppender(target);
  let after = range.after;
  let copied = 0;
  for (;;) {
    const page = await source.readAll({ afterPosition: after, maxCount: PAGE });
    let reachedEnd = page.length < PAGE;
    for (const event of page) {
      if (event.position > range.upTo) {
        reachedEnd = true;
        break;
      }
      after = event.position;
      if (isOperatorStream(event.streamId)) continue;
      await appender.add(event);
      copied++;
    }
    await appender.flush();
    onProgress(copied);
    if (reachedEnd) return { lastPosition: after, copied };
  }
}
