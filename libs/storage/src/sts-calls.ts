import { AssumeRoleCommand, Credentials, GetSessionTokenCommand, STSClient } from '@aws-sdk/client-sts';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { CatalogError, ErrorCode } from '@app/catalog';
import type { StsClientCredentials } from '@app/config';

export interface SessionCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

export interface AssumeRoleRequest {
  roleArn: string;
  sessionName: string;
  /** The inline session policy; absent: the role's own permissions. */
  policy?: string;
  durationSeconds: number;
}

/**
 * The STS calls the catalog makes: AssumeRole with its own credentials (what it vends), and, for the
 * chaining check, the calls a client holding a vended session could make with it.
 */
export class StsCalls {
  private readonly own: STSClient;
  readonly where: string;

  constructor(private readonly settings: StsClientCredentials) {
    this.own = this.clientFor(settings.credentials);
    this.where = settings.endpoint ?? `the ${settings.region} endpoint`;
  }

  /** AssumeRole with the catalog's credentials, or with a session's when `as` is given. */
  async assumeRole(request: AssumeRoleRequest, as?: SessionCredentials): Promise<SessionCredentials> {
    const command = new AssumeRoleCommand({
      RoleArn: request.roleArn,
      RoleSessionName: request.sessionName,
      Policy: request.policy,
      DurationSeconds: request.durationSeconds,
    });
    return this.withClient(as, async (client) => credentialsOf(await this.send(client, command, `AssumeRole of ${request.roleArn}`), this.where, request.roleArn));
  }

  /** GetSessionToken with a session's credentials: a store that answers it lets the session outlive itself. */
  async getSessionToken(as: SessionCredentials, durationSeconds: number): Promise<SessionCredentials> {
    return this.withClient(as, async (client) =>
      credentialsOf(await this.send(client, new GetSessionTokenCommand({ DurationSeconds: durationSeconds }), 'GetSessionToken'), this.where, 'GetSessionToken'),
    );
  }

  close(): void {
    this.own.destroy();
  }

  private async withClient<T>(as: SessionCredentials | undefined, work: (client: STSClient) => Promise<T>): Promise<T> {
    if (!as) return work(this.own);
    const client = this.clientFor(as);
    try {
      return await work(client);
    } finally {
      client.destroy();
    }
  }

  private clientFor(credentials: StsClientCredentials['credentials'] | SessionCredentials): STSClient {
    return new STSClient({
      region: this.settings.region,
      endpoint: this.settings.endpoint,
      credentials,
      // An unreachable STS answers 503 within seconds, not after the SDK's long default waits.
      maxAttempts: 2,
      requestHandler: new NodeHttpHandler({ connectionTimeout: 2000, requestTimeout: 10_000 }),
    });
  }

  private async send<T>(client: STSClient, command: AssumeRoleCommand | GetSessionTokenCommand, what: string): Promise<T> {
    try {
      return (await client.send(command as AssumeRoleCommand)) as T;
    } catch (e) {
      const err = e as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
      const status = err.$metadata?.httpStatusCode;
      throw status
        ? new StsFailure(`${this.where} refused ${what.split(' ')[0]} (HTTP ${status})`, `STS at ${this.where} refused ${what} with HTTP ${status} (${err.name}: ${err.message})`, status)
        : new StsFailure(`${this.where} is unreachable`, `STS at ${this.where} is unreachable: ${err.message ?? String(e)}`);
    }
  }
}

function credentialsOf(answer: { Credentials?: Credentials }, where: string, what: string): SessionCredentials {
  const c = answer.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
    throw new StsFailure(`${where} answered without credentials`, `STS at ${where} answered ${what} without credentials`);
  }
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
}

/**
 * STS unreachable, refusing, or answering nothing usable. For a client it is 503 code 17 (the
 * whole text goes to the log with the request id); /readyz shows the summary. `status` is STS's
 * HTTP status when it answered.
 */
export class StsFailure extends CatalogError {
  constructor(
    readonly summary: string,
    internal: string,
    readonly status?: number,
  ) {
    super(ErrorCode.ServiceUnavailable, 'the credential service (STS) vended no credentials for this table; retry later', undefined, internal);
  }
}
