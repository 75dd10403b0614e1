import { Verdict } from './checker';
import { FeedVerdict } from './feed-check';
import { FAULT_KINDS, FaultRecord } from './nemesis';
import { Observer, TRAIL_MS, UnexpectedAnswer } from './observer';

export interface SoakResult {
  seed: number;
  seconds: number;
  wallSeconds: number;
  acknowledged: number;
  lost: number;
  faults: number;
  faultsByKind: Record<string, number>;
  failedFaults: number;
  unexpected: number;
  operations: number;
  opsPerSecond: number;
  longestUnavailableMs: number;
  verdict: Verdict;
  /** What reached the change feed's sinks. */
  feed: FeedVerdict;
  /** Everything the checker or the observer found wrong, for a failing test to show. */
  problems: string[];
}

export function summarise(seed: number, seconds: number, wallSeconds: number, obs: Observer, faults: FaultRecord[], verdict: Verdict, crashes: string[], feed: FeedVerdict): SoakResult {
  const faultsByKind = Object.fromEntries(FAULT_KINDS.map((k) => [k, faults.filter((f) => f.kind === k && !f.error).length]));
  const lost = verdict.lost.length;
  const problems = [
    ...(verdict.error ? [`the check did not finish: ${verdict.error}`] : []),
    ...crashes.map((c) => `crash: ${c}`),
    ...verdict.lost.map((x) => `lost: ${x}`),
    ...verdict.doubleWinners.map((x) => `two winners: ${x}`),
    ...verdict.partialBatches.map((x) => `partial batch: ${x}`),
    ...verdict.stuck.map((x) => `stuck: ${x}`),
    ...verdict.badCounts.map((x) => `count: ${x}`),
    ...(verdict.digestMismatch ? [`digests differ: ${verdict.digestMismatch}`] : []),
    ...faults.filter((f) => f.error).map((f) => `fault ${f.kind} at ${f.atMs} ms did not complete: ${f.error}`),
    ...obs.unexpected.map((u) => unexpectedWithContext(u, faults)),
    ...feed.problems,
  ];
  return {
    seed,
    seconds,
    wallSeconds,
    acknowledged: obs.acknowledged,
    lost,
    faults: faults.filter((f) => !f.error).length,
    faultsByKind,
    failedFaults: faults.filter((f) => f.error).length,
    unexpected: obs.counts.unexpected,
    operations: obs.operations,
    opsPerSecond: obs.operations / seconds,
    longestUnavailableMs: obs.longestUnavailableMs,
    verdict,
    feed,
    problems,
  };
}

/** An unexpected answer, with what its client got in the minute before and the faults in that minute. */
function unexpectedWithContext(u: UnexpectedAnswer, faults: FaultRecord[]): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const near = faults.filter((f) => f.startedMs <= u.at && f.endedMs >= u.at - TRAIL_MS);
  return [
    `unexpected at ${s(u.at)}: ${u.driver} ${u.what}: ${u.detail}`,
    ...(u.trail.length ? ['    its client in the minute before:', ...u.trail.map((t) => `      ${t}`)] : []),
    ...(near.length ? ['    faults in that minute:', ...near.map((f) => `      ${f.kind}${f.kind.startsWith('kill') || f.kind === 'pause-replica' ? ` ${f.target}` : ''} ${s(f.startedMs)} to ${s(f.endedMs)}`)] : []),
  ].join('\n');
}

/** The run's report; its last line is the one a reader (or a script) looks at first. */
export function formatReport(r: SoakResult, obs: Observer): string {
  const lines = [
    `soak: seed ${r.seed}, ${r.seconds} s of load, ${r.wallSeconds.toFixed(0)} s wall`,
    `operations: ${r.operations} (${r.opsPerSecond.toFixed(1)} per second): ${JSON.stringify(obs.counts)}`,
    ...Object.entries(obs.byOperation).map(([op, c]) => `  ${op}: ${JSON.stringify(c)}`),
    `faults by kind: ${Object.entries(r.faultsByKind).map(([k, n]) => `${k} ${n}`).join(', ')}${r.failedFaults ? `; ${r.failedFaults} did not complete` : ''}`,
    `longest unavailability a client saw: ${(r.longestUnavailableMs / 1000).toFixed(1)} s (${obs.longestUnavailableWhere || 'none'})`,
    `checked ${r.verdict.checked} records; transactions: ${JSON.stringify(r.verdict.transactionStatuses)}`,
    `two winners ${r.verdict.doubleWinners.length}, partial batches ${r.verdict.partialBatches.length}, stuck transactions ${r.verdict.stuck.length}, bad counts ${r.verdict.badCounts.length}, digests ${r.verdict.digestMismatch ? 'DIFFER' : 'equal'}`,
  ];
  if (r.verdict.failed.length) lines.push(`failed transactions (${r.verdict.failed.length}):`, ...r.verdict.failed.map((f) => `  ${f}`));
  if (r.problems.length) {
    lines.push(`problems (${r.problems.length}, first 40):`);
    lines.push(...r.problems.slice(0, 40).map((p) => `  ${p}`));
  }
  lines.push(
    `acknowledged ${r.acknowledged}, lost ${r.lost}, faults ${r.faults}, unexpected 5xx ${r.unexpected}, ` +
      `events published ${r.feed.revisions}: NATS ${r.feed.nats}, webhook ${r.feed.webhook} (${r.feed.webhookRepeats} repeated), lost ${r.feed.revisions - Math.min(r.feed.nats, r.feed.webhook)}`,
  );
  return lines.join('\n');
}
