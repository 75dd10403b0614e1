import {
  AppendOptions,
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
} from '@app/event-store';
import { Metrics } from './metrics';

/** Times every append of the wrapped store; everything else passes straight through. */
export class MeteredEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly metrics: Metrics,
  ) {}

  get kind() {
    return this.inner.kind;
  }
  get journal() {
    return this.inner.journal;
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options?: AppendOptions): Promise<AppendResult> {
    const stop = this.metrics.appendSeconds.startTimer();
    try {
      const result = await this.inner.append(streamId, events, expected, options);
      stop({ outcome: 'appended' });
      return result;
    } catch (e) {
      stop({ outcome: e instanceof WrongExpectedRevisionError ? 'conflict' : 'error' });
      throw e;
    }
  }
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }
  streamRevision(streamId: string): Promise<number> {
    return this.inner.streamRevision(streamId);
  }
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }
  headPosition(): Promise<bigint> {
    return this.inner.headPosition();
  }
  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => void | Promise<void>): Subscription {
    return this.inner.subscribeToAll(options, onEvent);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
