import { RunningServer } from '../server';
import { FuzzCase } from './cases';

export interface Finding {
  rule: string;
  seed: number;
  /** None for what the end of a run found. */
  case?: FuzzCase;
  answer: string;
  /** What the server logged about it, when it logged anything. */
  log?: string;
}

export const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}... (${s.length} in all)` : s);

/** A finding as it is printed: enough to replay it, the body base64 when it is not text. */
export function formatFinding(f: Finding): string {
  const c = f.case;
  const log = f.log ? [`  server log:\n    ${f.log.split('\n').join('\n    ')}`] : [];
  if (!c) return [`FINDING: ${f.rule} (seed ${f.seed})`, ...log].join('\n');
  const body =
    c.body === undefined
      ? '(none)'
      : Buffer.isBuffer(c.body)
        ? `base64 (${c.body.length} bytes): ${truncate(c.body.toString('base64'), 600)}`
        : `(${c.body.length} characters): ${truncate(c.body, 600)}`;
  return [
    `FINDING: ${f.rule}`,
    `  replay: FUZZ_SEED=${f.seed} FUZZ_CASE=${c.index} npm run fuzz   (seed ${f.seed}, case ${c.index})`,
    `  ${c.operation} [${c.kind}: ${truncate(c.note, 300)}]`,
    `  ${c.method} ${truncate(c.path, 300)}`,
    `  headers: ${truncate(JSON.stringify(c.headers), 300)}`,
    `  body ${body}`,
    `  answer: ${truncate(f.answer, 500)}`,
    ...log,
  ].join('\n');
}

/** Findings grouped by rule, operation and kind of mutation, with how often each came. */
export function distinctFindings(findings: Finding[]): Array<{ key: string; count: number; first: Finding }> {
  const groups = new Map<string, { key: string; count: number; first: Finding }>();
  for (const f of findings) {
    const rule = f.rule.replace(/ \(revision:digest.*\)/, '').replace(/process \d+/, 'process').replace(/, resident memory \d+ MB/, '');
    const key = [rule, f.case?.operation ?? 'end of run', f.case?.kind, causeOf(f.log)].filter(Boolean).join(' | ');
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { key, count: 1, first: f });
  }
  return [...groups.values()];
}

/** The server's word on what failed, without the numbers that differ from case to case: a signal, a panic. */
function causeOf(log: string | undefined): string | undefined {
  const cause = log && (/ended \((SIG\w+)\)/.exec(log)?.[1] ?? /caused by: (.*?)(?:"|$)/m.exec(log)?.[1]);
  return cause ? truncate(cause.replace(/\d+/g, 'N'), 80) : undefined;
}

/** What the server logged about a request; its log is written in batches, so it is waited for a moment. */
export async function requestLog(server: RunningServer, requestId: string): Promise<string | undefined> {
  for (let i = 0; i < 20 && !server.output().includes(`request ${requestId}`); i++) await new Promise((r) => setTimeout(r, 50));
  const all = server.output().split('\n');
  const own = all.filter((l) => l.includes(requestId) && !l.includes('"request completed"'));
  // What the data plane logged just before the request's own line: a process's end and its signal.
  const at = all.findIndex((l) => l.includes(requestId));
  const before = at > 0 ? all.slice(Math.max(0, at - 2), at).filter((l) => l.includes('data-plane')) : [];
  const out = [...before, ...own].map((l) => truncate(l, 600));
  return out.length ? out.join('\n') : undefined;
}

/** The server's last log lines: what a process that died said last. */
export function lastLines(server: RunningServer, n = 6): string {
  return server
    .output()
    .split('\n')
    .filter(Boolean)
    .slice(-n)
    .map((l) => truncate(l, 400))
    .join('\n');
}
