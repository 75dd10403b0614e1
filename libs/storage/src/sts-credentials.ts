import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { LRUCache } from 'lru-cache';
import { CatalogError, ErrorCode } from '@app/catalog';
import type { StorageOptions, StsClientCredentials } from '@app/config';
import { CredentialVending, VendRequest, VendedAccess, withoutCredentials } from './credential-vending';
import { NOTHING_ALLOWED, partitionOf, tableSessionPolicy } from './session-policy';
import type { Warehouse } from './warehouse';

interface Session {
  options: StorageOptions;
  expiresAtMillis: number;
}

/** Lance's default is 60 s before expiry; shorter sessions are refreshed a fifth of their life before. */
export function refreshOffsetMillis(durationSeconds: number): number {
  return Math.min(60_000, Math.floor((durationSeconds * 1000) / 5));
}

/**
 * CLIENT_CREDENTIALS=sts: AssumeRole (the database's role, else STS_ROLE_ARN) with an inline
 * session policy for the one table's prefix, read-only or read-write. The answer carries
 * `expires_at_millis` and `refresh_offset_millis`, so Lance asks DescribeTable again before the
 * session ends. Sessions are kept per (role, table, access) and handed out again while at least
 * twice the refresh offset of their life is left: a client refreshing at the offset always gets a
 * fresh one, and a DescribeTable is an STS round trip only once per session.
 *
 * STS unreachable or refusing is 503 code 17: the catalog never hands out its own keys instead.
 */
export class StsCredentials implements CredentialVending {
  readonly kind = 'sts';
  readonly dependency: { name: string; ping(): Promise<void> };
  private readonly client: STSClient;
  private readonly sessions: LRUCache<string, Session>;
  private readonly minting = new Map<string, Promise<Session>>();
  private readonly refreshOffset: number;

  constructor(
    private readonly settings: StsClientCredentials,
    private readonly warehouse: Warehouse,
    cachedSessions = 10_000,
  ) {
    this.client = new STSClient({
      region: settings.region,
      endpoint: settings.endpoint,
      credentials: settings.credentials,
      // An unreachable STS answers 503 within seconds, not after the SDK's long default waits.
      maxAttempts: 2,
      requestHandler: new NodeHttpHandler({ connectionTimeout: 2000, requestTimeout: 10_000 }),
    });
    this.sessions = new LRUCache({ max: cachedSessions });
    this.refreshOffset = refreshOffsetMillis(settings.durationSeconds);
    this.dependency = { name: 'sts', ping: () => this.ping() };
  }

  reach(database: string): StorageOptions {
    return withoutCredentials(this.warehouse.storageOptions(database, false));
  }

  async vend(request: VendRequest): Promise<StorageOptions> {
    const roleArn = this.roleOf(request.database);
    const key = `${roleArn}\u0000${request.access}\u0000${request.location}`;
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
    this.client.destroy();
  }

  private roleOf(database: string): string {
    return this.settings.roleArnByDatabase[database] ?? this.settings.roleArn;
  }

  private async mint(request: VendRequest, roleArn: string): Promise<Session> {
    const credentials = await this.assume(roleArn, sessionName(request.database, request.access), tableSessionPolicy(request.location, request.access, partitionOf(roleArn)));
    const expiresAtMillis = credentials.Expiration!.getTime();
    return {
      expiresAtMillis,
      options: {
        ...this.reach(request.database),
        aws_access_key_id: credentials.AccessKeyId!,
        aws_secret_access_key: credentials.SecretAccessKey!,
        aws_session_token: credentials.SessionToken!,
        expires_at_millis: String(expiresAtMillis),
        refresh_offset_millis: String(this.refreshOffset),
      },
    };
  }

  /** Whether the default role can be assumed: a session allowed nothing, handed to no one. */
  private async ping(): Promise<void> {
    try {
      await this.assume(this.settings.roleArn, 'lance-catalog-readiness', NOTHING_ALLOWED);
    } catch (e) {
      // /readyz is public: the endpoint and what went wrong, not the role.
      throw new Error(e instanceof StsFailure ? e.summary : String(e));
    }
  }

  private async assume(roleArn: string, sessionName: string, policy: string) {
    const where = this.settings.endpoint ?? `the ${this.settings.region} endpoint`;
    let answer;
    try {
      answer = await this.client.send(
        new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: sessionName, Policy: policy, DurationSeconds: this.settings.durationSeconds }),
      );
    } catch (e) {
      const err = e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
      const status = err.$metadata?.httpStatusCode;
      throw status
        ? new StsFailure(`${where} refused AssumeRole (HTTP ${status})`, `STS at ${where} refused AssumeRole of ${roleArn} with HTTP ${status} (${err.name}: ${err.message})`)
        : new StsFailure(`${where} is unreachable`, `STS at ${where} is unreachable: ${err.message ?? String(e)}`);
    }
    const c = answer.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
      throw new StsFailure(`${where} answered AssumeRole without credentials`, `STS at ${where} answered AssumeRole of ${roleArn} without credentials`);
    }
    return c;
  }
}

/**
 * STS unreachable, refusing, or answering nothing usable. For a client it is 503 code 17 (the
 * whole text goes to the log with the request id); /readyz shows the summary.
 */
class StsFailure extends CatalogError {
  constructor(
    readonly summary: string,
    internal: string,
  ) {
    super(ErrorCode.ServiceUnavailable, 'the credential service (STS) vended no credentials for this table; retry later', undefined, internal);
  }
}

/** `lance-<database>-<access>`: what the store's logs and CloudTrail show for the session. */
function sessionName(database: string, access: VendedAccess): string {
  return `lance-${database}`.slice(0, 64 - access.length - 1) + `-${access}`;
}
