import { ErrorCode } from '@app/catalog';
import { accessOf } from '../../../apps/api/src/auth/access-policy';
import { httpStatusOf } from '../../../apps/api/src/http/error-status';
import { Api } from '../http';
import { RunningServer, startServer } from '../server';
import { CaseGenerator, FuzzCase, Operation } from './cases';
import { Finding, formatFinding, lastLines, requestLog, truncate } from './findings';
import { Fixtures, settleTransaction } from './fixtures';
import { FIXTURE } from './seeds';
import { Answer, aliveness, send } from './watch';

export { distinctFindings, formatFinding } from './findings';
export type { Finding } from './findings';

export interface FuzzOptions {
  seed: number;
  /** Run this many cases... */
  cases?: number;
  /** ...or as many as fit in this many seconds (whichever ends first). */
  seconds?: number;
  /** Run only these cases of the seed's run, on fresh fixtures. */
  only?: number[];
  /** How long one request may take before it counts as unanswered (AnalyzeTableQueryPlan may wait 30 s for a worker). */
  requestTimeoutMs?: number;
  /** How long the server may leave /healthz unanswered while a request is pending. */
  stallMs?: number;
  /** Progress and findings as they come. */
  log?: (line: string) => void;
  env?: Record<string, string>;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  seconds: number;
  /** Answers by status and code, and how many requests got none. */
  statuses: Record<string, number>;
  /** Server processes started beyond the first, after one died or stopped answering. */
  restarts: number;
  findings: Finding[];
  /** Served operations no valid request is written for (they got an empty one). */
  unseeded: string[];
  operations: number;
  /** The answers that took longest, slowest first: what comes close to a timeout. */
  slowest: Array<{ ms: number; what: string }>;
}

type Answered = Extract<Answer, { kind: 'answered' }>;

/** The ops routes answer with fixed text: the API document quotes the protocol's own prose. */
const OPS_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);
/** A page and a stream of server-sent events: no request body, and the stream does not end. */
const NOT_REQUESTS = new Set(['/ui', '/v1/history/live']);
/** Text no answer may carry: Lance's Rust sources, its error chains, JavaScript stack frames. */
const INTERNAL = [/\.rs:\d+/, /Caused by/i, /panicked at/, /\n\s+at [^\n]+:\d+:\d+/, /node_modules\//, /\.cargo\/registry/];

/**
 * Runs a seeded mutation fuzz against a real server process: every case is sent, its answer
 * checked, and whatever breaks a rule becomes a finding carrying what replays it. A server that
 * dies or stops answering is a finding too; a fresh one is started and the run goes on.
 */
export async function runMutationFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const session = new FuzzSession(options);
  return session.run();
}

class FuzzSession {
  private readonly started = Date.now();
  private readonly timeoutMs: number;
  private readonly stallMs: number;
  private readonly findings: Finding[] = [];
  private readonly statuses: Record<string, number> = {};
  private readonly slowest: Array<{ ms: number; what: string }> = [];
  private restarts = -1;
  private server!: RunningServer;
  private api!: Api;
  private fixtures!: Fixtures;
  private generator!: CaseGenerator;
  /** The catalog's digest as the last answer left it. */
  private baseline = '';
  /** The digest of the database no request names. */
  private untouched = '';

  constructor(private readonly options: FuzzOptions) {
    this.timeoutMs = options.requestTimeoutMs ?? 45_000;
    this.stallMs = options.stallMs ?? 10_000;
  }

  async run(): Promise<FuzzReport> {
    const { options } = this;
    let ran = 0;
    try {
      await this.boot();
      for (const index of caseIndexes(options)) {
        if (options.seconds !== undefined && Date.now() - this.started > options.seconds * 1000) break;
        await this.runCase(this.generator.caseAt(index));
        if (++ran % 100 === 0) this.log(`fuzz: ${ran} cases, ${this.findings.length} findings, ${Math.round((Date.now() - this.started) / 1000)} s`);
      }
      // At the end: the server still runs and answers, and the database no request named is as it was.
      const state = await aliveness(this.server);
      if (!state.healthy) await this.find(`at the end, ${state.what}`, undefined, '', { lines: lastLines(this.server) });
      else if ((await this.digest(FIXTURE.otherDatabase)) !== this.untouched) {
        await this.find(`the database '${FIXTURE.otherDatabase}' changed though no request named it`, undefined, '');
      }
    } finally {
      await this.server?.stop();
    }
    return {
      seed: options.seed,
      cases: ran,
      seconds: Math.round((Date.now() - this.started) / 1000),
      statuses: this.statuses,
      restarts: this.restarts,
      findings: this.findings,
      unseeded: this.generator.unseeded(),
      operations: this.generator.operations.length,
      slowest: this.slowest,
    };
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  /** A fresh server with fresh fixtures; the operations are those its /openapi.json lists. */
  private async boot(): Promise<void> {
    this.restarts++;
    this.server = await startServer({ env: { ACCESS_LOG: 'errors', ...this.options.env } });
    this.api = new Api(this.server.url);
    this.fixtures = new Fixtures(this.api);
    const fixture = await this.fixtures.make();
    const served = (await this.api.get('/openapi.json')).body.paths as Record<string, Record<string, unknown>>;
    const operations: Operation[] = Object.entries(served)
      .filter(([template]) => !NOT_REQUESTS.has(template))
      .flatMap(([template, item]) => Object.keys(item).filter((m) => m === 'get' || m === 'post').map((m) => ({ method: m.toUpperCase(), template })))
      .sort((a, b) => `${a.template} ${a.method}`.localeCompare(`${b.template} ${b.method}`));
    this.generator = new CaseGenerator(this.options.seed, operations, fixture);
    this.baseline = await this.digest();
    this.untouched = await this.digest(FIXTURE.otherDatabase);
  }

  private async replaceServer(): Promise<void> {
    await this.server.kill9();
    await this.boot();
  }

  private async digest(database?: string): Promise<string> {
    const r = await this.api.get('/v1/history/digest', database ? { 'x-lance-database': database } : {});
    return `${r.body?.revision}:${r.body?.digest}`;
  }

  private async find(rule: string, c: FuzzCase | undefined, answer: string, about: { requestId?: string; lines?: string } = {}): Promise<void> {
    const log = about.lines ?? (about.requestId ? await requestLog(this.server, about.requestId) : undefined);
    const f: Finding = { rule, seed: this.options.seed, case: c, answer, log };
    this.findings.push(f);
    this.log(formatFinding(f));
  }

  private async runCase(c: FuzzCase): Promise<void> {
    try {
      const sent = Date.now();
      const answer = await send(this.server.url, c, { timeoutMs: this.timeoutMs, stallMs: this.stallMs });
      this.slowest.push({ ms: Date.now() - sent, what: `case ${c.index}: ${c.operation} [${c.kind}: ${truncate(c.note, 120)}] -> ${answer.kind === 'answered' ? answer.status : answer.kind}` });
      this.slowest.sort((a, b) => b.ms - a.ms).splice(5);
      const outcome = answer.kind === 'answered' ? `${answer.status}${answer.status >= 400 ? ` code ${answer.code}` : ''}` : answer.kind;
      this.statuses[outcome] = (this.statuses[outcome] ?? 0) + 1;
      if (answer.kind === 'unsendable') return;
      if (answer.kind === 'answered') return await this.check(c, answer);

      const state = await aliveness(this.server);
      const what = {
        timeout: `no answer within ${this.timeoutMs / 1000} s`,
        stalled: `the server stopped answering /healthz for ${this.stallMs / 1000} s while it worked on the request`,
        failed: `the connection failed (${answer.kind === 'failed' ? answer.error : ''})`,
      }[answer.kind];
      await this.find(`${what}; ${state.what}`, c, answer.kind, { lines: state.exited ? lastLines(this.server) : undefined });
      // A request still running could change the catalog later: the run goes on with a fresh server.
      if (answer.kind !== 'failed' || !state.healthy) await this.replaceServer();
      else this.baseline = await this.digest();
    } catch (e) {
      // The server went away while the answer was checked, or the fixtures could not be made again.
      const state = await aliveness(this.server);
      await this.find(`checking the answer failed (${truncate((e as Error).message, 200)}); ${state.what}`, c, '', { lines: lastLines(this.server) });
      await this.replaceServer();
    }
  }

  private async check(c: FuzzCase, answer: Answered): Promise<void> {
    const { status, text, body, code, requestId } = answer;
    const summary = `${status} ${truncate(text, 400)}`;
    const find = (rule: string) => this.find(rule, c, summary, { requestId });
    if (status === 500 && code === 18) await find('Lance broke on the input (500 code 18)');
    else if (status >= 500 && !(status === 503 && code === 17)) await find(`${status} answer`);
    if (status >= 400) {
      if (typeof body !== 'object' || body === null || typeof body.error !== 'string' || !Number.isInteger(code)) await find('the error answer is not JSON {error, code}');
      else if (httpStatusOf(code as ErrorCode) !== status && ![413, 415, 431].includes(status)) await find(`code ${code} answered with status ${status}`);
    }
    const leaks = this.leaks(c, answer);
    if (leaks.length) await find(`the answer holds internal text (${leaks.join(', ')})`);

    if (status >= 200 && status < 300) {
      // A success may change the catalog, at once and by the work it queued: wait for that work,
      // make again what it took from the fixtures, and measure from there.
      if (!isRead(c)) {
        for (const id of [body?.transaction_id, body?.job_id].filter((x) => typeof x === 'string')) {
          if (!(await settleTransaction(this.api, id))) await find(`transaction ${id} did not end within 60 s`);
        }
        await this.fixtures.restore();
      }
      this.baseline = await this.digest();
      return;
    }
    const after = await this.digest();
    if (after !== this.baseline) await find(`a refused request changed the catalog (revision:digest ${this.baseline} -> ${after})`);
    this.baseline = after;
  }

  private leaks(c: FuzzCase, answer: Answered): string[] {
    const textual = !answer.contentType.includes('arrow') && !OPS_ROUTES.has(c.operation.split(' ')[1]);
    // A path the request itself named may be quoted back; the server's own may not.
    const dataDir = this.server.dataDir;
    const echoed = [c.path, JSON.stringify(c.headers), typeof c.body === 'string' ? c.body : ''].some((t) => t.includes(dataDir));
    return [
      ...(textual ? INTERNAL.filter((re) => re.test(answer.text)).map(String) : []),
      ...(answer.status >= 400 && !echoed && answer.text.includes(dataDir) ? ['the data directory'] : []),
    ];
  }
}

function* caseIndexes(options: FuzzOptions): Generator<number> {
  if (options.only) return yield* options.only;
  for (let i = 0; i < (options.cases ?? Infinity); i++) yield i;
}

function isRead(c: FuzzCase): boolean {
  const [method, template] = c.operation.split(' ');
  return method === 'GET' || accessOf(method, template.replace(/\{(\w+)\}/g, ':$1')) === 'read';
}
