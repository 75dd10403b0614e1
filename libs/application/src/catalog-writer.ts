import { randomUUID } from 'node:crypto';
import { CatalogEnvelope, CatalogError, CatalogEvent, CatalogView, ErrorCode, EventMetadata } from '@app/catalog';
import { EventStore, EventStoreUnavailableError, WrongExpectedRevisionError } from '@app/event-store';
import { ProjectionRegistry } from '@app/projections';
import { RequestContext } from './request-context';

export interface Decision<R> {
  events: CatalogEvent[];
  /** Builds the answer once the events are durable (or when there was nothing to append). */
  result: (transactionId: string | undefined) => R;
  /**
   * Side effects that must be in place before the events may be appended (manifest
   * finalisation). Returns how to undo them if the append does not happen.
   */
  prepare?: () => Promise<() => Promise<void>>;
}

const MAX_ATTEMPTS = 25;

/**
 * Runs commands: decide against the caught-up state at revision R, append with expected revision R,
 * and on a conflict catch up and decide again. A genuine conflict then shows up as the decision's
 * own error (for example ConcurrentModification for a version that now exists).
 */
export class CatalogWriter {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: EventStore,
    private readonly projections: ProjectionRegistry,
  ) {}

  execute<R>(request: RequestContext, operation: string, decide: (view: CatalogView, metadata: EventMetadata) => Decision<R>): Promise<R> {
    return this.locked(request.database, () => this.attempt(request, operation, decide));
  }

  private async attempt<R>(
    request: RequestContext,
    operation: string,
    decide: (view: CatalogView, metadata: EventMetadata) => Decision<R>,
  ): Promise<R> {
    const metadata: EventMetadata = {
      transactionId: randomUUID(),
      operation,
      occurredAt: new Date().toISOString(),
      ...(Object.keys(request.context).length ? { context: request.context } : {}),
      ...(request.principal ? { principal: request.principal } : {}),
    };
    for (let attempt = 1; ; attempt++) {
      const projection = await unavailableAs503(() => this.projections.current(request.database));
      const expected = projection.state.revision;
      const decision = decide(projection.state, metadata);
      if (decision.events.length === 0) return decision.result(undefined);
      const undo = decision.prepare ? await decision.prepare() : undefined;
      try {
        const appended = await this.store.append(
          projection.streamId,
          decision.events.map((event) => ({ type: event.type, data: event.data, metadata })),
          expected === -1 ? 'no_stream' : expected,
        );
        const first = appended.nextExpectedRevision - decision.events.length + 1;
        const envelopes: CatalogEnvelope[] = decision.events.map((event, i) => ({ event, metadata, revision: first + i }));
        await projection.applyAppended(envelopes);
        return decision.result(metadata.transactionId);
      } catch (e) {
        if (undo) await undo();
        if (e instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) {
          await pause(attempt);
          continue;
        }
        if (e instanceof WrongExpectedRevisionError) {
          throw new CatalogError(ErrorCode.ConcurrentModification, 'too many concurrent writers; retry the request');
        }
        throw toCatalogError(e);
      }
    }
  }

  /** One writer per database inside this process; other processes are held off by the expected revision. */
  private locked<T>(database: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(database) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.locks.set(database, tail);
    void tail.then(() => {
      if (this.locks.get(database) === tail) this.locks.delete(database);
    });
    return run;
  }
}

export async function unavailableAs503<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw toCatalogError(e);
  }
}

function toCatalogError(e: unknown): unknown {
  if (e instanceof EventStoreUnavailableError) {
    return new CatalogError(ErrorCode.ServiceUnavailable, 'the event store is unavailable; retry later', e.message);
  }
  return e;
}

function pause(attempt: number): Promise<void> {
  const ms = Math.min(50, 2 ** Math.min(attempt, 5)) * Math.random();
  return new Promise((r) => setTimeout(r, ms));
}
