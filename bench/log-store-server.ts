import { randomUUID } from 'node:crypto';
import { fdatasyncSync, mkdirSync, openSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import * as factory from '../libs/event-store/src/create-event-store';
import {
  AppendOptions,
  AppendResult,
  EventStore,
  ExpectedRevision,
  FileJournal,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
  revisionMatches,
} from '../libs/event-store/src/event-store.port';

/**
 * This server, whole, with its embedded store swapped for the minimal catalog's: one process, the
 * events kept in memory, each append one `writev` of its events and its manifests' bytes and one
 * fdatasync, the manifests kept in that log for good (the journal never has anything to sync).
 * It measures what goal 3's "different store" would give this server's request path. It is not
 * a store: it reads nothing back at start, serves one process only, and its log only grows.
 *
 * Usage: DATA_DIR=… node log-store-server.js (the server's own settings otherwise).
 */
class AppendOnlyLog implements EventStore {
  readonly kind = 'bench-log';
  private readonly fd: number;
  private readonly events: RecordedEvent[] = [];
  private readonly streams = new Map<string, RecordedEvent[]>();
  private readonly listeners = new Set<() => void>();
  readonly journal: FileJournal = { pending: async () => [], pendingPaths: async () => [], newestId: async () => 0, release: async () => undefined, releasePaths: async () => undefined };

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.fd = openSync(join(dir, 'events.log'), 'a');
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options: AppendOptions = {}): Promise<AppendResult> {
    let stream = this.streams.get(streamId);
    if (!stream) this.streams.set(streamId, (stream = []));
    const current = stream.length - 1;
    if (!revisionMatches(expected, current)) throw new WrongExpectedRevisionError(streamId, expected, current);
    const created = new Date();
    const recorded = events.map((e, i): RecordedEvent => ({
      id: e.id ?? randomUUID(),
      streamId,
      revision: current + 1 + i,
      position: BigInt(this.events.length + 1 + i),
      type: e.type,
      data: e.data ?? null,
      metadata: e.metadata ?? {},
      created,
    }));
    const files = options.files ?? [];
    const line = Buffer.from(
      `${JSON.stringify({ streamId, events: recorded.map((r) => ({ ...r, position: String(r.position) })), files: files.map((f) => [f.path, f.bytes.byteLength]) })}\n`,
    );
    writevSync(this.fd, [line, ...files.map((f) => f.bytes)]);
    fdatasyncSync(this.fd);
    this.events.push(...recorded);
    stream.push(...recorded);
    for (const wake of this.listeners) wake();
    const last = recorded[recorded.length - 1];
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const from = options.fromRevision ?? 0;
    return (this.streams.get(streamId) ?? []).slice(from, options.maxCount === undefined ? undefined : from + options.maxCount);
  }

  async streamRevision(streamId: string): Promise<number> {
    return (this.streams.get(streamId)?.length ?? 0) - 1;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const from = Number(options.afterPosition ?? 0n);
    return this.events.slice(from, options.maxCount === undefined ? undefined : from + options.maxCount);
  }

  async headPosition(): Promise<bigint> {
    return BigInt(this.events.length);
  }

  subscribeToAll(options: SubscribeOptions, onEvent: (event: RecordedEvent) => void | Promise<void>): Subscription {
    let after = Number(options.afterPosition ?? 0n);
    let closed = false;
    let wake: () => void = () => undefined;
    const listener = () => wake();
    this.listeners.add(listener);
    const loop = async () => {
      while (!closed) {
        while (after < this.events.length && !closed) await onEvent(this.events[after++]);
        if (!closed) await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    const running = loop();
    return {
      close: async () => {
        closed = true;
        this.listeners.delete(listener);
        wake();
        await running;
      },
    };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}

(factory as { createEventStore: typeof factory.createEventStore }).createEventStore = (_setting, dataDir) => new AppendOnlyLog(dataDir);
require('../apps/api/src/standalone');
