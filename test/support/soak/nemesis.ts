import { Rng } from '../fuzz/rng';
import { Cluster, Node } from './topology';

const CLUSTER_FAULT_KINDS = ['kill-api', 'kill-worker', 'restart-redis', 'restart-postgres', 'stop-swift', 'pause-replica'] as const;
/** The change feed's own destinations: their faults come on a schedule of their own, beside the cluster's. */
const FEED_FAULT_KINDS = ['restart-nats', 'fail-receiver'] as const;
export const FAULT_KINDS = [...CLUSTER_FAULT_KINDS, ...FEED_FAULT_KINDS] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  /** When it starts, from the start of the load. */
  atMs: number;
  kind: FaultKind;
  /** Which replica (kill-api, kill-worker: 0-1; pause-replica: 0-1 the APIs, 2-3 the workers). */
  target: number;
  /** How long the service stays down or the replica stays paused. */
  downMs: number;
}

/**
 * The faults of a run, from its seed alone: kinds come in rounds, each round every kind once in
 * an order drawn from the seed, so a short run still meets every kind; starts are 3 to 6 s
 * apart, from `warmupMs` until `untilMs`. The change feed's destinations (NATS, the webhook
 * receiver) get a second such schedule of their own, overlapping the cluster's, 4 to 8 s apart.
 */
export function faultSchedule(seed: number, warmupMs: number, untilMs: number): Fault[] {
  const cluster = rounds(new Rng(seed ^ 0x50a4), CLUSTER_FAULT_KINDS, warmupMs, untilMs, [3000, 6000]);
  const feed = rounds(new Rng(seed ^ 0xfeed), FEED_FAULT_KINDS, warmupMs + 1000, untilMs, [4000, 8000]);
  return [...cluster, ...feed].sort((a, b) => a.atMs - b.atMs);
}

function rounds(rng: Rng, kinds: readonly FaultKind[], warmupMs: number, untilMs: number, gapMs: [number, number]): Fault[] {
  const faults: Fault[] = [];
  let at = warmupMs;
  while (at < untilMs) {
    const round = [...kinds];
    for (let i = round.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [round[i], round[j]] = [round[j], round[i]];
    }
    for (const kind of round) {
      if (at >= untilMs) break;
      faults.push({ atMs: at, kind, target: rng.int(0, kind === 'pause-replica' ? 3 : 1), downMs: rng.int(500, kind === 'pause-replica' ? 4000 : kind === 'fail-receiver' ? 6000 : 3000) });
      at += rng.int(gapMs[0], gapMs[1]);
    }
  }
  return faults;
}

export interface FaultRecord extends Fault {
  startedMs: number;
  endedMs: number;
  error?: string;
}

/**
 * Runs the schedule against the cluster. A fault starts at its moment, or once the fault before
 * it on the same part (a replica, Redis, PostgreSQL, Swift) has ended; faults on different parts
 * overlap. Each one ends with its part serving again.
 */
export async function runNemesis(
  cluster: Cluster,
  schedule: Fault[],
  started: number,
  log: (line: string) => void,
  /** Each fault as it starts (`endedMs` 0 until it has ended), for clients to tell what was down. */
  live: FaultRecord[] = [],
): Promise<FaultRecord[]> {
  const busy = new Map<string, Promise<void>>();
  const running: Promise<void>[] = [];
  for (const fault of schedule) {
    const wait = started + fault.atMs - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const [part, act] = action(cluster, fault);
    const before = busy.get(part) ?? Promise.resolve();
    const run = before.then(async () => {
      const record: FaultRecord = { ...fault, startedMs: Date.now() - started, endedMs: 0 };
      live.push(record);
      try {
        await act();
      } catch (e) {
        record.error = String((e as Error)?.stack ?? e).slice(0, 2000);
        log(`fault ${fault.kind} on ${part} failed: ${record.error}`);
      }
      record.endedMs = Date.now() - started;
    });
    busy.set(part, run);
    running.push(run);
  }
  await Promise.all(running);
  return [...live].sort((a, b) => a.atMs - b.atMs);
}

function action(cluster: Cluster, fault: Fault): [string, () => Promise<void>] {
  const node = (n: Node) => n;
  switch (fault.kind) {
    case 'kill-api': {
      const n = node(cluster.apis[fault.target]);
      return [n.name, () => cluster.killAndRestart(n)];
    }
    case 'kill-worker': {
      const n = node(cluster.workers[fault.target]);
      return [n.name, () => cluster.killAndRestart(n)];
    }
    case 'pause-replica': {
      const n = [...cluster.apis, ...cluster.workers][fault.target];
      return [n.name, () => cluster.pause(n, fault.downMs)];
    }
    case 'restart-redis':
      return ['redis', () => cluster.restartRedis(fault.downMs)];
    case 'restart-postgres':
      return ['postgres', () => cluster.restartPostgres(fault.downMs)];
    case 'stop-swift':
      return ['swift', () => cluster.stopStartSwift(fault.downMs)];
    case 'restart-nats':
      return ['nats', () => cluster.restartNats(fault.downMs)];
    case 'fail-receiver':
      return ['receiver', () => cluster.failReceiver(fault.downMs)];
  }
}
