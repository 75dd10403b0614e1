import { CatalogError, ErrorCode } from '@app/catalog';
import { EventStoreUnavailableError } from '@app/event-store';
import { StorageUnavailableError } from '@app/storage';
import { lanceInputError } from './lance-errors';

/**
 * What a queued job's failed attempt means. `unavailable`: a service it needs (the catalog API at
 * CATALOG_URL, the event store, the object store) could not be reached, code 17; waiting may help.
 * `conflict`: Lance gave up committing against concurrent writers, code 14; another attempt may
 * succeed. `refused`: anything else; the same request would be refused again.
 */
export type JobFailure = { kind: 'unavailable'; reason: string } | { kind: 'conflict'; error: Error } | { kind: 'refused'; error: Error };

export function jobFailure(e: unknown, what: string): JobFailure {
  if (e instanceof EventStoreUnavailableError) return { kind: 'unavailable', reason: 'the event store is unavailable' };
  if (e instanceof StorageUnavailableError) return { kind: 'unavailable', reason: e.message };
  const error = e instanceof CatalogError || (e instanceof Error && e.name === 'UnrecoverableError') ? e : lanceInputError(e, what);
  if (!(error instanceof CatalogError)) return { kind: 'refused', error: error as Error };
  if (error.code === ErrorCode.ServiceUnavailable) return { kind: 'unavailable', reason: error.message };
  return error.code === ErrorCode.ConcurrentModification ? { kind: 'conflict', error } : { kind: 'refused', error };
}
