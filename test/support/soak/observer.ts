/**
 * Every answer a load driver got, sorted as the checker needs it: a success; a refusal the protocol
 * defines for what the driver did (a driver names its own, e.g. 409 code 14 on a racing commit);
 * 503 code 17 with Retry-After (the service is unavailable, try again); anything else is unexpected.
 * Also how long each client went without a success while it kept getting "unavailable".
 */
export type Outcome = 'success' | 'refusal' | 'unavailable' | 'unexpected';

export interface Refusal {
  status: number;
  code: number;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export interface UnexpectedAnswer {
  at: number;
  driver: string;
  what: string;
  status: number;
  detail: string;
  /** What the same client got in the minute before, oldest first: what led a client library to give up. */
  trail: string[];
}

/** How far back an unexpected answer's trail reaches, and how many answers it keeps at most. */
export const TRAIL_MS = 60_000;
const TRAIL_ANSWERS = 60;

export class Observer {
  readonly counts: Record<Outcome, number> = { success: 0, refusal: 0, unavailable: 0, unexpected: 0 };
  readonly byOperation: Record<string, Record<Outcome, number>> = {};
  readonly unexpected: UnexpectedAnswer[] = [];
  /** Acknowledged writes (2xx of a mutating call). */
  acknowledged = 0;
  /**
   * The longest time, per client, from its first "unavailable" to its next success; a client that
   * asks only now and then (a racer's listing after a round nobody won) is counted to its last
   * failed answer, plus the successful call itself, not across the time it asked nothing.
   */
  longestUnavailableMs = 0;
  longestUnavailableWhere = '';
  private downSince = new Map<string, number>();
  private lastFailedAt = new Map<string, number>();
  /** Each client's answers of the last TRAIL_MS (a lancedb client's own and those its proxy saw, together). */
  private readonly trails = new Map<string, Array<{ at: number; line: string }>>();
  readonly started = Date.now();

  /** Sorts one HTTP answer; `refusals` are the 4xx the protocol defines for this call's situation. */
  answer(driver: string, what: string, reply: Answer, refusals: Refusal[] = [], startedAt = Date.now()): Outcome {
    let outcome: Outcome;
    if (reply.status >= 200 && reply.status < 300) outcome = 'success';
    else if (refusals.some((r) => r.status === reply.status && r.code === reply.body?.code)) outcome = 'refusal';
    else if (reply.status === 503 && reply.body?.code === 17 && reply.headers.get('retry-after')) outcome = 'unavailable';
    else outcome = 'unexpected';
    const detail = `${reply.status} ${typeof reply.body === 'string' ? reply.body.slice(0, 300) : JSON.stringify(reply.body)?.slice(0, 300)}${reply.status === 503 ? ` retry-after=${reply.headers.get('retry-after')}` : ''}`;
    return this.note(driver, what, outcome, reply.status, detail, startedAt);
  }

  /** A request that got no HTTP answer at all (the balancer never goes away, so this is unexpected). */
  noAnswer(driver: string, what: string, error: unknown, startedAt = Date.now()): Outcome {
    const cause = (error as any)?.cause;
    return this.note(driver, what, 'unexpected', 0, String((error as Error)?.message ?? error) + (cause ? ` (${cause})` : ''), startedAt);
  }

  /** What a client library reported: `outcome` is the driver's reading of it. */
  client(driver: string, what: string, outcome: Outcome, detail: string, startedAt = Date.now()): Outcome {
    return this.note(driver, what, outcome, 0, detail, startedAt);
  }

  /** One more acknowledged write. */
  ack(): void {
    this.acknowledged++;
  }

  /**
   * A slow success counts as unavailability too (a paused replica answers late, not with an error):
   * the span runs from the first request since the client's last success that did not succeed at once.
   */
  note(driver: string, what: string, outcome: Outcome, status: number, detail: string, startedAt: number): Outcome {
    this.counts[outcome]++;
    (this.byOperation[what] ??= { success: 0, refusal: 0, unavailable: 0, unexpected: 0 })[outcome]++;
    const now = Date.now();
    const trail = this.trailOf(driver, now);
    if (outcome === 'unexpected') this.unexpected.push({ at: now - this.started, driver, what, status, detail, trail: trail.map((t) => t.line) });
    const seconds = ((now - this.started) / 1000).toFixed(1);
    trail.push({ at: now, line: `${seconds} s ${what}: ${outcome}${outcome === 'success' ? '' : ` ${detail.slice(0, 200)}`}` });
    if (outcome === 'unavailable' || outcome === 'unexpected') {
      if (!this.downSince.has(driver)) this.downSince.set(driver, startedAt);
      this.lastFailedAt.set(driver, now);
    } else {
      const since = this.downSince.get(driver) ?? startedAt;
      const until = Math.min(now, (this.lastFailedAt.get(driver) ?? now) + (now - startedAt));
      this.downSince.delete(driver);
      this.lastFailedAt.delete(driver);
      if (until - since > this.longestUnavailableMs) {
        this.longestUnavailableMs = until - since;
        this.longestUnavailableWhere = `${driver} from ${((since - this.started) / 1000).toFixed(1)} s`;
      }
    }
    return outcome;
  }

  private trailOf(driver: string, now: number): Array<{ at: number; line: string }> {
    const client = driver.replace(/:http$/, '');
    let trail = this.trails.get(client);
    if (!trail) this.trails.set(client, (trail = []));
    while (trail.length && (trail[0].at < now - TRAIL_MS || trail.length >= TRAIL_ANSWERS)) trail.shift();
    return trail;
  }

  get operations(): number {
    return this.counts.success + this.counts.refusal + this.counts.unavailable + this.counts.unexpected;
  }
}
