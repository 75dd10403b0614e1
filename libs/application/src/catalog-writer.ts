import { randomUUID } from 'node:crypto';
import { CatalogEnvelope, CatalogError, CatalogEvent, CatalogView, DraftCatalog, ErrorCode, EventMetadata, evolve } from '@app/catalog';
import { EventStore, EventStoreUnavailableError, JournaledFile, WrongExpectedRevisionError } from '@app/event-store';
import { ProjectionRegistry } from '@app/projections';
import { RequestContext } from './request-context';

export interface Decision<R> {
  events: CatalogEvent[];
  /** Another command's events carried in the same append, under that command's own metadata. */
  riders?: Rider[];
  /** Builds the answer once the events are durable (or when there was nothing to append). */
  result: (transactionId: string | undefined) => R;
  /** Side effects that must be in place before the events may be appended (manifest finalisation). */
  prepare?: () => Promise<Prepared>;
}

export interface Prepared {
  /** Undoes the side effects when the events are not appended. */
  undo: () => Promise<void>;
  /** Files whose content the store records in the same durable write as the events. */
  files?: JournaledFile[];
  /**
   * Runs once the events are durable, before the command is answered; never rejects. Side effects
   * that may only follow the record (an object store's copy of a manifest to its final name).
   */
  published?: () => Promise<void>;
  /** Runs once the events are durable: cleaning up what only the commit needed. */
  committed?: () => void;
}

/**
 * Events of a command decided elsewhere that ride on this decision's append: a server-side write's
 * TableDataChanged on the commit that wrote its version, so the two take one durable write.
 */
export interface Rider {
  metadata: EventMetadata;
  events: CatalogEvent[];
  /** Told, once the group is through, whether the events were appended (they may ride again on a retry). */
  settled(appended: boolean): void;
}

const MAX_ATTEMPTS = 25;
/** How many queued commands one append may carry. */
const MAX_GROUP = 512;

interface Pending {
  request: RequestContext;
  metadata: EventMetadata;
  decide: (view: CatalogView, metadata: EventMetadata) => Decision<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  attempts: number;
  /**
   * Undoes the side effects earlier attempts prepared. They are kept while the command is decided
   * again after a revision conflict (preparing them again is idempotent), because another client
   * may already have seen them: a finalised manifest that vanished and came back would make a
   * concurrent Lance commit fail reading it. They are undone only when the command fails for good.
   */
  undo?: () => Promise<void>;
}

interface Accepted {
  item: Pending;
  decision: Decision<unknown>;
  /** Whether its events are on the group's draft already. */
  onDraft?: boolean;
  /** What preparing it gave, this attempt: files to record with the events. */
  prepared?: Prepared;
}

/**
 * Runs commands: decide against the caught-up state at revision R, append with expected revision R,
 * and on a conflict catch up and decide again. A genuine conflict then shows up as the decision's
 * own error (for example ConcurrentModification for a version that now exists).
 *
 * Group commit: commands for one database that arrive while an append is in flight wait for it,
 * then are decided one after another on a draft of the state (each sees the ones before it), their
 * side effects prepared concurrently, and their events appended together, one durable write for
 * the group. Each command still has its own transaction and its own answer; one that is refused
 * appends nothing and does not hold back the others.
 */
export class CatalogWriter {
  private readonly queues = new Map<string, Pending[]>();

  constructor(
    private readonly store: EventStore,
    private readonly projections: ProjectionRegistry,
    /** Refuses appends while an operator holds the log still (lance-catalog migrate). */
    private readonly freeze?: { refusal(): CatalogError | undefined },
  ) {}

  execute<R>(request: RequestContext, operation: string, decide: (view: CatalogView, metadata: EventMetadata) => Decision<R>): Promise<R> {
    const metadata = eventMetadata(request, operation);
    return new Promise<R>((resolve, reject) => {
      const item: Pending = { request, metadata, decide, resolve: resolve as (v: unknown) => void, reject, attempts: 0 };
      const queue = this.queues.get(request.database);
      if (queue) return void queue.push(item);
      this.queues.set(request.database, [item]);
      setImmediate(() => void this.drain(request.database));
    });
  }

  /**
   * One drain loop per database runs while its queue has work; it is the only appender here. It
   * starts, and takes each next group, only after the event loop has read what else arrived:
   * deciding, finalising and appending are synchronous underneath, so without that pause a group
   * would never hold more than the command that started it.
   */
  private async drain(database: string): Promise<void> {
    const queue = this.queues.get(database)!;
    try {
      while (queue.length) {
        const group = queue.splice(0, MAX_GROUP);
        const retry = await this.commitGroup(database, group);
        queue.unshift(...retry);
        if (queue.length) await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.queues.delete(database);
      // Commands that arrived after the last check start a new loop.
      if (queue.length) {
        this.queues.set(database, queue);
        setImmediate(() => void this.drain(database));
      }
    }
  }

  /** Decides, prepares and appends one group; returns the commands to run again. */
  private async commitGroup(database: string, group: Pending[]): Promise<Pending[]> {
    const refusal = this.freeze?.refusal();
    if (refusal) {
      await Promise.all(group.map((item) => fail(item, refusal)));
      return [];
    }
    let projection;
    try {
      // The group was taken after the event loop read what arrived: its head read can be its own.
      projection = await unavailableAs503(() => this.projections.currentNow(database));
    } catch (e) {
      for (const item of group) item.reject(e);
      return [];
    }
    const expected = projection.state.revision;
    const draft = new DraftCatalog(projection.state);
    const accepted: Accepted[] = [];
    // Commands refused, or found already done, on a draft carrying other commands' events: their
    // answer holds only once those events are durable, so it waits for the group's append.
    const onOthers: Array<{ item: Pending; answer: () => void }> = [];
    for (const item of group) {
      // The draft takes the last accepted command's events only when another command is decided on it.
      const previous = accepted[accepted.length - 1];
      if (previous && !previous.onDraft) {
        for (const { event, metadata } of eventsOf(previous.item, previous.decision)) evolve(draft, { event, metadata, revision: -1 });
        previous.onDraft = true;
      }
      const answerNow = (answer: () => void) => (previous ? onOthers.push({ item, answer }) : answer());
      let decision: Decision<unknown>;
      try {
        decision = item.decide(draft, item.metadata);
      } catch (e) {
        answerNow(() => void fail(item, e));
        continue;
      }
      if (decision.events.length === 0) {
        answerNow(() => void undoOf(item).then(() => settle(item, () => decision.result(undefined))));
        continue;
      }
      accepted.push({ item, decision });
    }
    if (accepted.length === 0) return [];
    const notAppended = () => {
      for (const a of accepted) for (const rider of a.decision.riders ?? []) rider.settled(false);
    };
    const outcome = await this.prepareAndAppend(projection, expected, accepted).catch((e) => {
      notAppended();
      for (const { item } of onOthers) item.reject(e);
      throw e;
    });
    if (outcome.appended) {
      for (const { answer } of onOthers) answer();
      return outcome.retry;
    }
    notAppended();
    // The events they were decided on never became durable: they are decided again.
    return [...outcome.retry, ...onOthers.map(({ item }) => item)];
  }

  /** Prepares the accepted commands' side effects and appends their events; says what to run again. */
  private async prepareAndAppend(
    projection: Awaited<ReturnType<ProjectionRegistry['currentNow']>>,
    expected: number,
    accepted: Accepted[],
  ): Promise<{ appended: boolean; retry: Pending[] }> {
    const again = (retry: Pending[]) => ({ appended: false, retry });

    // Side effects (manifest finalisation) run side by side: their fsyncs overlap.
    const prepared = await Promise.allSettled(accepted.map((a) => (a.decision.prepare ? a.decision.prepare() : Promise.resolve(undefined))));
    prepared.forEach((p, i) => {
      if (p.status !== 'fulfilled' || !p.value) return;
      accepted[i].prepared = p.value;
      accepted[i].item.undo = chain(accepted[i].item.undo, p.value.undo);
    });
    const failed = prepared.findIndex((p) => p.status === 'rejected');
    if (failed >= 0) {
      // Later commands may have been decided on top of the failed one: refuse it, decide the rest again.
      const retry: Pending[] = [];
      await Promise.all(
        accepted.map(async (a, i) => {
          if (prepared[i].status === 'rejected') await fail(a.item, toCatalogError((prepared[i] as PromiseRejectedResult).reason));
          else retry.push(a.item);
        }),
      );
      return again(retry);
    }

    const appending = accepted.flatMap((a) => eventsOf(a.item, a.decision));
    const records = appending.map(({ event, metadata }) => ({ type: event.type, data: event.data, metadata }));
    const files = accepted.flatMap((a) => a.prepared?.files ?? []);
    let appended;
    try {
      appended = await this.store.append(projection.streamId, records, expected === -1 ? 'no_stream' : expected, files.length ? { files } : undefined);
    } catch (e) {
      if (e instanceof WrongExpectedRevisionError) {
        // Another process wrote first: catch up and decide again, a bounded number of times.
        const retry: Pending[] = [];
        for (const a of accepted) {
          if (++a.item.attempts < MAX_ATTEMPTS) retry.push(a.item);
          else await fail(a.item, new CatalogError(ErrorCode.ConcurrentModification, 'too many concurrent writers; retry the request'));
        }
        if (retry.length) await pause(Math.min(...retry.map((r) => r.attempts)));
        return again(retry);
      }
      await Promise.all(accepted.map((a) => fail(a.item, toCatalogError(e))));
      return again([]);
    }
    let revision = appended.nextExpectedRevision - records.length + 1;
    const envelopes: CatalogEnvelope[] = appending.map(({ event, metadata }) => ({ event, metadata, revision: revision++ }));
    // The events are durable; if folding them here fails, the next catch-up reads them back.
    await projection.applyAppended(envelopes).catch(() => undefined);
    // Riders learn first: a rider's owner is waiting for the answer this group is about to give.
    for (const a of accepted) for (const rider of a.decision.riders ?? []) rider.settled(true);
    for (const a of accepted) {
      a.item.undo = undefined;
      const answer = () => {
        a.prepared?.committed?.();
        settle(a.item, () => a.decision.result(a.item.metadata.transactionId));
      };
      // The next group need not wait for this one's copies.
      if (a.prepared?.published) void a.prepared.published().catch(() => undefined).then(answer);
      else answer();
    }
    return { appended: true, retry: [] };
  }
}

function settle(item: Pending, answer: () => unknown): void {
  try {
    item.resolve(answer());
  } catch (e) {
    item.reject(e);
  }
}

/** Runs and forgets the side effects a command prepared. */
async function undoOf(item: Pending): Promise<void> {
  const undo = item.undo;
  item.undo = undefined;
  await undo?.().catch(() => undefined);
}

/** The command fails for good: its side effects are undone before it is answered. */
async function fail(item: Pending, error: unknown): Promise<void> {
  await undoOf(item);
  item.reject(error);
}

function chain(first: (() => Promise<void>) | undefined, then: () => Promise<void>): () => Promise<void> {
  return first ? async () => (await then(), await first()) : then;
}

/** A command's events and those riding on it, in append order, each with its own metadata. */
function eventsOf(item: Pending, decision: Decision<unknown>): Array<{ event: CatalogEvent; metadata: EventMetadata }> {
  return [
    ...decision.events.map((event) => ({ event, metadata: item.metadata })),
    ...(decision.riders ?? []).flatMap((rider) => rider.events.map((event) => ({ event, metadata: rider.metadata }))),
  ];
}

/** The metadata of a command's events: a fresh transaction, and who asked, when and with what context. */
export function eventMetadata(request: RequestContext, operation: string): EventMetadata {
  return {
    transactionId: randomUUID(),
    operation,
    occurredAt: new Date().toISOString(),
    ...(Object.keys(request.context).length ? { context: request.context } : {}),
    ...(request.principal ? { principal: request.principal } : {}),
  };
}

export function unavailableAs503<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work().catch((e: unknown) => {
      throw toCatalogError(e);
    });
  } catch (e) {
    return Promise.reject(toCatalogError(e));
  }
}

function toCatalogError(e: unknown): unknown {
  if (e instanceof EventStoreUnavailableError) {
    return new CatalogError(ErrorCode.ServiceUnavailable, 'the event store is unavailable; retry later', undefined, e.message);
  }
  return e;
}

function pause(attempt: number): Promise<void> {
  const ms = Math.min(50, 2 ** Math.min(attempt, 5)) * Math.random();
  return new Promise((r) => setTimeout(r, ms));
}
