import { CatalogEnvelope } from './events';
import { evolve } from './evolve';
import { CatalogState } from './catalog-state';

/** How often (in events of a database's stream) its state forgets old transactions. */
export const FORGET_EVERY = 10_000;

/**
 * Folds one recorded event into a database's state. Every FORGET_EVERY events the state forgets
 * the transactions that ended more than `transactionMemoryMs` before that event was recorded (0:
 * never), so memory follows what is live rather than the deployment's age. The moment and the
 * cutoff come from the log itself (a revision and the event's own time), so every process that
 * folds the same log, a replay included, holds the same state.
 */
export function foldRecorded(state: CatalogState, envelope: CatalogEnvelope, transactionMemoryMs: number): void {
  evolve(state, envelope);
  state.revision = envelope.revision;
  if (transactionMemoryMs > 0 && (envelope.revision + 1) % FORGET_EVERY === 0) {
    const at = Date.parse(envelope.metadata.occurredAt);
    if (!Number.isNaN(at)) state.forgetTransactionsBefore(at - transactionMemoryMs);
  }
}
