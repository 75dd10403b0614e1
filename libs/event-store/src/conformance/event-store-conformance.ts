import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { EventStore, RecordedEvent, WrongExpectedRevisionError } from '../event-store.port';

export interface ConformanceTarget {
  /** Opens a new store instance (a new connection to the same store). */
  open(): Promise<EventStore>;
  /**
   * Starts a child process that opens the same store and appends `count` events to `stream`,
   * one at a time with expected revisions, printing `ack <revision>` after each acknowledged
   * append. Used to kill -9 a writer mid-stream.
   */
  spawnWriter(stream: string, count: number): { pid: number; acks: () => number[]; exited: Promise<void>; kill: () => void };
}

const expectRejects = async (work: Promise<unknown>, type: new (...args: never[]) => Error) => {
  let error: unknown;
  try {
    await work;
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(type);
};

/**
 * The behaviour every event store adapter must have. It runs against the embedded store always
 * and against EventStoreDB wherever one is reachable.
 */
export function describeEventStoreConformance(name: string, target: ConformanceTarget): void {
  describe(`event store conformance: ${name}`, () => {
    let store: EventStore;
    const stream = () => `conformance-${randomUUID()}`;

    beforeAll(async () => {
      store = await target.open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('keeps a stream in append order, with contiguous revisions', async () => {
      const s = stream();
      const first = await store.append(s, [{ type: 'A', data: { n: 0 } }], 'no_stream');
      expect(first.nextExpectedRevision).toBe(0);
      const second = await store.append(s, [1, 2, 3].map((n) => ({ type: 'B', data: { n }, metadata: { m: n } })), 0);
      expect(second.nextExpectedRevision).toBe(3);
      expect(second.position > first.position).toBe(true);
      const events = await store.readStream(s);
      expect(events.map((e) => e.revision)).toEqual([0, 1, 2, 3]);
      expect(events.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3]);
      expect(events[2]).toMatchObject({ streamId: s, type: 'B', metadata: { m: 2 } });
      expect(events[2].created).toBeInstanceOf(Date);
      expect(await store.streamRevision(s)).toBe(3);
      expect(await store.streamRevision(stream())).toBe(-1);
      expect(await store.readStream(stream())).toEqual([]);
    });

    it('reads a stream from a revision, with a maximum count', async () => {
      const s = stream();
      await store.append(s, Array.from({ length: 10 }, (_, n) => ({ type: 'N', data: { n } })), 'no_stream');
      const page = await store.readStream(s, { fromRevision: 4, maxCount: 3 });
      expect(page.map((e) => e.revision)).toEqual([4, 5, 6]);
      expect(await store.readStream(s, { fromRevision: 10 })).toEqual([]);
    });

    it('keeps one global order across streams and reads it from a position', async () => {
      const a = stream();
      const b = stream();
      const start = await store.append(a, [{ type: 'X', data: { i: 0 } }], 'no_stream');
      await store.append(b, [{ type: 'X', data: { i: 1 } }], 'no_stream');
      await store.append(a, [{ type: 'X', data: { i: 2 } }], 0);
      const after = (await store.readAll({ afterPosition: start.position, maxCount: 10_000 })).filter(
        (e) => e.streamId === a || e.streamId === b,
      );
      expect(after.map((e) => (e.data as { i: number }).i)).toEqual([1, 2]);
      const positions = after.map((e) => e.position);
      expect([...positions].sort((x, y) => (x < y ? -1 : 1))).toEqual(positions);
      const limited = await store.readAll({ afterPosition: start.position, maxCount: 1 });
      expect(limited).toHaveLength(1);
    });

    it('names the position of its newest event', async () => {
      const appended = await store.append(stream(), [{ type: 'H', data: {} }, { type: 'H', data: {} }], 'no_stream');
      const head = await store.headPosition();
      expect(head >= appended.position).toBe(true);
      expect(await store.readAll({ afterPosition: head, maxCount: 10 })).toEqual([]);
    });

    it('refuses a wrong expected revision and leaves the stream untouched', async () => {
      const s = stream();
      await store.append(s, [{ type: 'A', data: {} }], 'no_stream');
      await expectRejects(store.append(s, [{ type: 'B', data: {} }], 'no_stream'), WrongExpectedRevisionError);
      await expectRejects(store.append(s, [{ type: 'B', data: {} }], 5), WrongExpectedRevisionError);
      await expectRejects(store.append(stream(), [{ type: 'B', data: {} }], 0), WrongExpectedRevisionError);
      expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A']);
      const any = await store.append(s, [{ type: 'C', data: {} }], 'any');
      expect(any.nextExpectedRevision).toBe(1);
    });

    it('appends a batch atomically: a refused batch leaves none of its events', async () => {
      const s = stream();
      await store.append(s, [{ type: 'A', data: {} }], 'no_stream');
      const batch = Array.from({ length: 50 }, (_, n) => ({ type: 'Batch', data: { n } }));
      await expectRejects(store.append(s, batch, 7), WrongExpectedRevisionError);
      expect(await store.readStream(s)).toHaveLength(1);
      await store.append(s, batch, 0);
      const events = await store.readStream(s);
      expect(events).toHaveLength(51);
      const positions = events.slice(1).map((e) => e.position);
      expect(new Set(positions).size).toBe(50);
    });

    it('lets exactly one of two racing appends at the same expected revision win', async () => {
      const other = await target.open();
      try {
        for (let round = 0; round < 20; round++) {
          const s = stream();
          await store.append(s, [{ type: 'Start', data: {} }], 'no_stream');
          const results = await Promise.allSettled([
            store.append(s, [{ type: 'Left', data: {} }, { type: 'Left', data: {} }], 0),
            other.append(s, [{ type: 'Right', data: {} }], 0),
          ]);
          const won = results.filter((r) => r.status === 'fulfilled');
          const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
          expect(won).toHaveLength(1);
          expect(lost[0].reason).toBeInstanceOf(WrongExpectedRevisionError);
          const types = (await store.readStream(s)).map((e) => e.type);
          expect([['Start', 'Left', 'Left'], ['Start', 'Right']]).toContainEqual(types);
        }
      } finally {
        await other.close();
      }
    });

    it('catches a subscription up from a position, then delivers live events in order, once', async () => {
      const s = stream();
      const start = await store.append(s, [{ type: 'Before', data: { n: 0 } }], 'no_stream');
      await store.append(s, [{ type: 'Before', data: { n: 1 } }], 0);
      const seen: RecordedEvent[] = [];
      const sub = store.subscribeToAll({ afterPosition: start.position }, async (e) => {
        if (e.streamId === s) seen.push(e);
      });
      const writer = await target.open();
      try {
        await writer.append(s, [{ type: 'Live', data: { n: 2 } }], 1);
        await store.append(s, [{ type: 'Live', data: { n: 3 } }, { type: 'Live', data: { n: 4 } }], 2);
        await waitFor(() => seen.length >= 4);
        await new Promise((r) => setTimeout(r, 200));
        expect(seen.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3, 4]);
        await sub.close();
        await store.append(s, [{ type: 'After', data: { n: 5 } }], 4);
        await new Promise((r) => setTimeout(r, 200));
        expect(seen).toHaveLength(4);
      } finally {
        await sub.close();
        await writer.close();
      }
    });

    it('keeps every acknowledged append when the writing process is killed with SIGKILL', async () => {
      const s = stream();
      const writer = target.spawnWriter(s, 100_000);
      await waitFor(() => writer.acks().length >= 50, 30_000);
      writer.kill();
      await writer.exited;
      const acked = writer.acks();
      const fresh = await target.open();
      try {
        const events = await readWholeStream(fresh, s);
        const revisions = events.map((e) => e.revision);
        expect(revisions).toEqual(revisions.map((_, i) => i));
        expect(revisions.length).toBeGreaterThanOrEqual(acked.length);
        expect(revisions.length).toBeLessThanOrEqual(acked.length + 1);
        for (const r of acked) expect(revisions).toContain(r);
      } finally {
        await fresh.close();
      }
    });

    it('answers ping while it is reachable', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}

async function readWholeStream(store: EventStore, s: string): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readStream(s, { fromRevision: all.length, maxCount: 1000 });
    all.push(...page);
    if (page.length < 1000) return all;
  }
}

async function waitFor(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Spawns `node <script> <args>` and collects its `ack <revision>` lines. */
export function spawnAckingWriter(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', script, ...args], {
    env: { ...process.env, TS_NODE_PROJECT: require.resolve('../../../../tsconfig.json'), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acks: number[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop()!;
    for (const line of lines) {
      const m = /^ack (\d+)$/.exec(line);
      if (m) acks.push(Number(m[1]));
    }
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return { pid: child.pid!, acks: () => [...acks], exited, kill: () => child.kill('SIGKILL') };
}
