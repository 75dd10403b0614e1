import { EventStore, recordLoadEvent, unfinishedLoad, unfinishedLoadProblem } from '@app/event-store';
import { CommandFailure, EXIT } from './exit-codes';
import { isEmpty } from './log-copy';
import { shown } from './verb';

/** Refuses a store that holds anything, saying what to do when it is a load that never finished; `refusal` ends the sentence otherwise. */
export async function requireEmptyStore(store: EventStore, setting: string, refusal: string): Promise<void> {
  const unfinished = await unfinishedLoad(store);
  if (unfinished) throw new CommandFailure(EXIT.notEmpty, `the event store ${shown(setting)} already holds events: ${unfinishedLoadProblem(unfinished)}`);
  if (!(await isEmpty(store))) throw new CommandFailure(EXIT.notEmpty, `the event store ${shown(setting)} already holds events: ${refusal}`);
}

/** Refuses to read a store as a whole catalog (to export it, or to migrate from it) while a load of it is unfinished. */
export async function requireFinishedLoad(store: EventStore, setting: string): Promise<void> {
  const unfinished = await unfinishedLoad(store);
  if (unfinished) throw new CommandFailure(EXIT.notEmpty, `the event store ${shown(setting)} is not a whole catalog: ${unfinishedLoadProblem(unfinished)}`);
}

/**
 * Fills an empty store between the operator's two words that bracket a load (write-freeze.ts): a
 * command that dies or fails part way leaves `StoreLoading` last, and no server starts on what it
 * wrote.
 */
export async function loadStore<T>(store: EventStore, verb: string, load: () => Promise<T>): Promise<T> {
  await markLoading(store, verb);
  const loaded = await load();
  await markLoaded(store, verb);
  return loaded;
}

export function markLoading(store: EventStore, verb: string): Promise<void> {
  return recordLoadEvent(store, { type: 'StoreLoading', data: { verb, startedAt: new Date().toISOString() } });
}

export function markLoaded(store: EventStore, verb: string): Promise<void> {
  return recordLoadEvent(store, { type: 'StoreLoaded', data: { verb } });
}
