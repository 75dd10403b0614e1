import { Logger } from '@nestjs/common';

/** How often the same error from the worker's queues is logged again. */
const REPEAT_MS = 60_000;
const logged = new Map<string, number>();

/**
 * Logs an error a BullMQ worker or queue of this process raised. Without a listener BullMQ prints
 * each one, and while Redis is away that is every reconnection of every queue, several a second;
 * here the same message is logged at most once a minute, whichever queue raised it.
 */
export function logQueueError(queue: string, error: Error): void {
  const now = Date.now();
  if (now - (logged.get(error.message) ?? -Infinity) < REPEAT_MS) return;
  logged.set(error.message, now);
  new Logger(`queue ${queue}`).warn(`${error.message} (the same error is logged again at most once a minute)`);
}
