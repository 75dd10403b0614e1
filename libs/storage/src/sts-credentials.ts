import { LRUCache } from 'lru-cache';
import type { StorageOptions, StsClientCredentials } from '@app/config';
import { CredentialVending, VendRequest, VendedAccess, withoutCredentials } from './credential-vending';
import { joinLocation } from './object-uri';
import { NOTHING_ALLOWED, partitionOf, tableSessionPolicy } from './session-policy';
import { StsCalls, StsFailure } from './sts-calls';
import { StsChainingCheck } from './sts-chaining-check';
import type { Warehouse } from './warehouse';

interface Session {
  options: StorageOptions;
  expiresAtMillis: number;
}

/** Lance's default is 60 s before expiry; shorter sessions are refreshed a fifth of their life before. */
export function refreshOffsetMillis(durationSeconds: number): number {
  return Math.min(60_000, Math.floor((durationSeconds * 1000) / 5));
}

export interface StsVendingOptions {
  cachedSessions?: number;
  /** How often the chaining check runs (STS_CHAINING_CHECK_SECONDS). */
  chainingCheckMillis?: number;
  log?: (level: 'error' | 'log', message: string) => void;
}

/**
 * CLIENT_CREDENTIALS=sts: AssumeRole (the database's role, else STS_ROLE_ARN) with an inline
 * session policy for the one table's prefix, read-only or read-write. The answer carries
 * `expires_at_millis` and `refresh_offset_millis`, so Lance asks DescribeTable again before the
 * session ends. Sessions are kept per (role, access, table incarnation) and handed out again while
 * at least twice the refresh offset of their life is left: a client refreshing at the offset always
 * gets a fresh one, and a DescribeTable is an STS round trip only once per session. A table dropped,
 * renamed or registered again is another incarnation and never gets an earlier session.
 *
 * Nothing is vended until the chaining check has proven that a vended session cannot obtain
 * another (sts-chaining-check.ts), nor while a check finds it can.
 * STS unreachable or refusing is 503 code 17: the catalog never hands out its own keys instead.
 */
export class StsCredentials implements CredentialVending {
  readonly kind = 'sts';
  readonly dependency: { name: string; ping(): Promise<void> };
  private readonly calls: StsCalls;
  private readonly chaining: StsChainingCheck;
  private readonly sessions: LRUCache<string, Session>;
  private readonly minting = new Map<string, Promise<Session>>();
  private readonly refreshOffset: number;

  constructor(
    private readonly settings: StsClientCredentials,
    private readonly warehouse: Warehouse,
    options: StsVendingOptions = {},
  ) {
    this.calls = new StsCalls(settings);
    this.sessions = new LRUCache({ max: options.cachedSessions ?? 10_000 });
    this.refreshOffset = refreshOffsetMillis(settings.durationSeconds);
    this.dependency = { name: 'sts', ping: () => this.ping() };
    this.chaining = new StsChainingCheck(this.calls, {
      roles: [settings.roleArn, ...Object.values(settings.roleArnByDatabase)],
      probePolicy: () => tableSessionPolicy(joinLocation(warehouse.root, '.sts-chaining-probe'), 'read', partitionOf(settings.roleArn)),
      durationSeconds: settings.durationSeconds,
      everyMillis: options.chainingCheckMillis ?? 300_000,
      log: options.log ?? (() => undefined),
    });
    // Sessions already handed out may chain: none of them is handed out again.
    this.chaining.onVerdict((verdict) => verdict.kind === 'chainable' && this.sessions.clear());
  }

  start(): void {
    this.chaining.start();
  }

  reach(database: string): StorageOptions {
    return withoutCredentials(this.warehouse.storageOptions(database, false));
  }

  async vend(request: VendRequest): Promise<StorageOptions> {
    await this.chaining.requireSafe();
    const roleArn = this.roleOf(request.database);
    const key = [roleArn, request.access, request.location, request.table].join('\u0000');
    const held = this.sessions.get(key);
    if (held && held.expiresAtMillis - Date.now() > 2 * this.refreshOffset) return { ...held.options };
    let pending = this.minting.get(key);
    if (!pending) {
      pending = this.mint(request, roleArn).finally(() => this.minting.delete(key));
      this.minting.set(key, pending);
    }
    const session = await pending;
    this.sessions.set(key, session);
    return { ...session.options };
  }

  close(): void {
    this.chaining.stop();
    this.calls.close();
  }

  private roleOf(database: string): string {
    return this.settings.roleArnByDatabase[database] ?? this.settings.roleArn;
  }

  private async mint(request: VendRequest, roleArn: string): Promise<Session> {
    const policy = tableSessionPolicy(request.location, request.access, partitionOf(roleArn));
    const credentials = await this.calls.assumeRole({ roleArn, sessionName: sessionName(request.database, request.access), policy, durationSeconds: this.settings.durationSeconds });
    const expiresAtMillis = credentials.expiration.getTime();
    return {
      expiresAtMillis,
      options: {
        ...this.reach(request.database),
        aws_access_key_id: credentials.accessKeyId,
        aws_secret_access_key: credentials.secretAccessKey,
        aws_session_token: credentials.sessionToken,
        expires_at_millis: String(expiresAtMillis),
        refresh_offset_millis: String(this.refreshOffset),
      },
    };
  }

  /**
   * Whether the default role can be assumed (a session allowed nothing, handed to no one) and the
   * chaining check passed. /readyz is public: the endpoint, role names and what went wrong, no ARN.
   */
  private async ping(): Promise<void> {
    this.chaining.start();
    try {
      await this.calls.assumeRole({ roleArn: this.settings.roleArn, sessionName: 'lance-catalog-readiness', policy: NOTHING_ALLOWED, durationSeconds: this.settings.durationSeconds });
    } catch (e) {
      throw new Error(e instanceof StsFailure ? e.summary : String(e));
    }
    const problem = this.chaining.problem();
    if (problem) throw new Error(problem);
  }
}

/** `lance-<database>-<access>`: what the store's logs and CloudTrail show for the session. */
function sessionName(database: string, access: VendedAccess): string {
  return `lance-${database}`.slice(0, 64 - access.length - 1) + `-${access}`;
}
