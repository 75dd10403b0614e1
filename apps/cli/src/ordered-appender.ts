import { EventStore, NewEvent } from '@app/event-store';

/** One event as it is carried between stores: what the log says of it, less its global position. */
export interface CarriedEvent {
  streamId: string;
  revision: number;
  id: string;
  type: string;
  data: unknown;
  metadata: unknown;
}

const MAX_BATCH = 500;

/**
 * Appends events to a store in the order they are given (the source's global order), each at its
 * own revision with its own id: a stream's run of consecutive events goes in one append, whose
 * expected revision is the one before the run, so a copy that overlaps or skips is refused, not
 * silently made. The ids kept make a projection snapshot of the source valid on the copy too.
 */
export class OrderedAppender {
  private run?: { streamId: string; first: number; events: NewEvent[] };
  appended = 0;

  constructor(private readonly target: EventStore) {}

  async add(event: CarriedEvent): Promise<void> {
    const run = this.run;
    if (run && (run.streamId !== event.streamId || run.first + run.events.length !== event.revision || run.events.length >= MAX_BATCH)) {
      await this.flush();
    }
    this.run ??= { streamId: event.streamId, first: event.revision, events: [] };
    this.run.events.push({ id: event.id, type: event.type, data: event.data, metadata: event.metadata });
  }

  async flush(): Promise<void> {
    const run = this.run;
    if (!run) return;
    this.run = undefined;
    await this.target.append(run.streamId, run.events, run.first === 0 ? 'no_stream' : run.first - 1);
    this.appended += run.events.length;
  }
}
