import { CatalogError, ErrorCode } from '@app/catalog';
import { SessionCredentials, StsCalls, StsFailure } from './sts-calls';

export type ChainingVerdict =
  | { kind: 'safe'; atMillis: number }
  /** A session of role `from` obtained another session: `how` is the call that answered. */
  | { kind: 'chainable'; atMillis: number; from: string; how: string }
  /** STS could not be asked: nothing is proven either way. */
  | { kind: 'unproven'; atMillis: number; reason: string };

export interface ChainingCheckSettings {
  /** Every role the catalog vends sessions of: the default one and each database's. */
  roles: string[];
  /** The session policy a probe session gets: the same shape as a vended table's. */
  probePolicy: () => string;
  durationSeconds: number;
  everyMillis: number;
  log: (level: 'error' | 'log', message: string) => void;
}

/** How soon a check that could not reach STS is tried again when a vend needs a verdict. */
const RETRY_UNPROVEN_MILLIS = 5000;
/** A chained call refused with one of these statuses proves the session cannot chain. */
const REFUSED = new Set([401, 403, 404]);

/**
 * A vended session must not be able to get another session: on Ceph RGW a role session may call
 * AssumeRole with no session policy applied to the call, and a role whose trust policy lets its own
 * sessions in (RGW matches a session against its user's principal) hands out the role's whole
 * reach for as long as the role allows, surviving the key that got the first session. So the
 * catalog mints a session as it would for a table, with each role, and tries with it what a client
 * could: AssumeRole of every role (no policy), and GetSessionToken. Only refusals (401, 403 or 404)
 * prove the setup safe; until then, and whenever a check finds otherwise, nothing is vended.
 */
export class StsChainingCheck {
  private verdict?: ChainingVerdict;
  private running?: Promise<ChainingVerdict>;
  private timer?: NodeJS.Timeout;
  private readonly listeners: ((verdict: ChainingVerdict) => void)[] = [];

  constructor(
    private readonly calls: StsCalls,
    private readonly settings: ChainingCheckSettings,
  ) {}

  /** Checks now and then every `everyMillis`. */
  start(): void {
    if (this.timer) return;
    void this.run();
    this.timer = setInterval(() => void this.run(), this.settings.everyMillis);
    this.timer.unref();
  }

  onVerdict(listener: (verdict: ChainingVerdict) => void): void {
    this.listeners.push(listener);
  }

  /** Resolves when vending is proven safe; 503 code 17 otherwise. */
  async requireSafe(): Promise<void> {
    let verdict = this.verdict;
    if (!verdict || (verdict.kind === 'unproven' && Date.now() - verdict.atMillis > RETRY_UNPROVEN_MILLIS)) verdict = await this.run();
    if (verdict.kind === 'safe') return;
    if (verdict.kind === 'chainable') {
      throw new CatalogError(
        ErrorCode.ServiceUnavailable,
        'credential vending is stopped: the object store lets a vended session obtain another session (STS), so no credentials are handed out until an operator fixes the role; /readyz says which',
      );
    }
    throw new StsFailure(verdict.reason, `the STS chaining check could not run: ${verdict.reason}`);
  }

  /** What /readyz shows: undefined while vending is proven safe. */
  problem(): string | undefined {
    const v = this.verdict;
    if (!v || v.kind === 'safe') return undefined;
    if (v.kind === 'unproven') return `not yet proven that vended sessions cannot obtain others: ${v.reason}`;
    return `vending stopped: a session of role '${roleName(v.from)}' ${v.how}; fix the role's trust policy (docs/security.md, "Roles that cannot be chained")`;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  run(): Promise<ChainingVerdict> {
    this.running ??= this.check()
      .then((found) => this.settle(found))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private settle(found: ChainingVerdict): ChainingVerdict {
    const before = this.verdict;
    // An outage proves nothing: a verdict already reached stands until STS answers again.
    if (found.kind === 'unproven' && before && before.kind !== 'unproven') return before;
    this.verdict = found;
    if (found.kind === 'chainable' && before?.kind !== 'chainable') {
      this.settings.log(
        'error',
        `credential vending stopped: a session of ${found.from} ${found.how}. A vended session could then reach everything the role reaches, ` +
          'for as long as the role allows, whatever key it was vended to. Make the role refuse its own and other roles\' sessions: ' +
          'on Ceph RGW, a trust policy that allows only the catalog\'s user with the condition {"Null": {"aws:TokenIssueTime": "true"}}; ' +
          'on AWS, a trust policy naming only the catalog\'s principal (never the account root) and a Deny of sts:* in the role\'s permission policy ' +
          '(docs/security.md, "Roles that cannot be chained"). Vending resumes at the next check that finds every chained call refused.',
      );
    } else if (found.kind === 'safe' && before?.kind === 'chainable') {
      this.settings.log('log', 'credential vending resumed: no vended session can obtain another session');
    }
    for (const listener of this.listeners) listener(found);
    return found;
  }

  private async check(): Promise<ChainingVerdict> {
    const roles = [...new Set(this.settings.roles)];
    try {
      for (const from of roles) {
        const probe = await this.probeSession(from);
        if (!probe) continue;
        for (const to of roles) {
          const answered = await this.attempt(() =>
            this.calls.assumeRole({ roleArn: to, sessionName: 'lance-catalog-chaining-check', durationSeconds: this.settings.durationSeconds }, probe),
          );
          if (answered) return { kind: 'chainable', atMillis: Date.now(), from, how: `obtained a session of role '${roleName(to)}' (STS AssumeRole ${answered})` };
        }
        const renewed = await this.attempt(() => this.calls.getSessionToken(probe, this.settings.durationSeconds));
        if (renewed) return { kind: 'chainable', atMillis: Date.now(), from, how: `obtained a session of its own (STS GetSessionToken ${renewed})` };
      }
      return { kind: 'safe', atMillis: Date.now() };
    } catch (e) {
      return { kind: 'unproven', atMillis: Date.now(), reason: e instanceof StsFailure ? e.summary : (e as Error).message };
    }
  }

  /** A session of `role` shaped as a vended one; none when the catalog itself may not assume the role. */
  private async probeSession(role: string): Promise<SessionCredentials | undefined> {
    try {
      return await this.calls.assumeRole({ roleArn: role, sessionName: 'lance-catalog-chaining-probe', policy: this.settings.probePolicy(), durationSeconds: this.settings.durationSeconds });
    } catch (e) {
      // A role the catalog cannot assume has no sessions to chain from (it is still tried as a target).
      if (e instanceof StsFailure && e.status !== undefined && REFUSED.has(e.status)) return undefined;
      throw e;
    }
  }

  /**
   * Undefined when STS refused the call as it must; otherwise how it answered. An answer other than
   * a refusal (a 400 for a duration, say) proves nothing, since a client may pick other parameters.
   */
  private async attempt(call: () => Promise<SessionCredentials>): Promise<string | undefined> {
    try {
      await call();
      return 'answered 200';
    } catch (e) {
      if (!(e instanceof StsFailure) || e.status === undefined) throw e;
      return REFUSED.has(e.status) ? undefined : `answered HTTP ${e.status}, not a refusal`;
    }
  }
}

/** The name of a role, without the account its ARN names. */
export function roleName(roleArn: string): string {
  return roleArn.slice(roleArn.lastIndexOf('/') + 1);
}
