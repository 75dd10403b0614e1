import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { Hash, Hmac, createHash, createHmac, randomUUID } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePorts } from './ports';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A one-node Ceph cluster with its RADOS Gateway: a real S3 server with STS, from Debian's packages
 * (scripts/provision-test-packages.sh installs them): a monitor, one OSD keeping objects in memory,
 * and radosgw, on free ports in a directory of their own, without cephx. RGW honours conditional
 * PUTs (`If-None-Match: *`), so Lance can commit to it on its own, and AssumeRole with an inline
 * session policy gives credentials it enforces, expiry included.
 */
export interface RgwServer {
  /** `http://127.0.0.1:<port>`: the S3, STS and IAM endpoint. */
  endpoint: string;
  region: string;
  /** The catalog's own user (its keys assume roles; it owns the buckets). */
  accessKeyId: string;
  secretAccessKey: string;
  /** A role the catalog's user may assume, allowed everything on every bucket: sessions narrow it per table. */
  roleArn: string;
  /** The AWS_* variables a server process reaches this store with. */
  awsEnv(): Record<string, string>;
  /** The Lance storage options the catalog user's credentials reach this store with. */
  storageOptions(): Record<string, string>;
  createBucket(name: string): Promise<void>;
  /**
   * A role the catalog user may assume, whose own policy allows everything under `prefixes`
   * (bucket/key...). Its trust policy refuses role sessions, as README's setup says, unless
   * `chainable` asks for the trust policy that lets a vended session assume it again.
   */
  createRole(name: string, prefixes: string[], trust?: { chainable?: boolean }): Promise<string>;
  /** Replaces a role's trust policy: the safe one, or the chainable one. */
  setRoleTrust(name: string, trust: { chainable: boolean }): Promise<void>;
  /** An S3 client with the catalog user's credentials, or with vended ones. */
  client(credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client;
  /**
   * A SigV4-signed request to the gateway for `service` (`iam`, `s3`...) with these credentials,
   * as any client holding them could send: the IAM query API and the admin API (`/admin/...`).
   */
  signed(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }, service: string, request: { method: string; path: string; query?: Record<string, string>; form?: Record<string, string> }): Promise<{ status: number; body: string }>;
  /** Runs `radosgw-admin` with these arguments against this cluster; answers its standard output. */
  admin(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

export interface RgwOptions {
  /** `rgw sts min session duration`: the shortest session STS grants (Ceph's default is 900 s). */
  minSessionSeconds?: number;
}

const ACCESS_KEY = 'CATALOGACCESSKEY000';
const SECRET_KEY = 'catalog-secret-key-for-tests-0000000000';

export async function startRgw(options: RgwOptions = {}): Promise<RgwServer> {
  const dir = mkdtempSync(join(tmpdir(), 'rgw-'));
  for (const sub of ['run', 'log', 'rgw', 'mon.a', 'osd.0']) mkdirSync(join(dir, sub), { recursive: true });
  const [monPort, rgwPort] = await freePorts(2);
  const fsid = randomUUID();
  const conf = join(dir, 'ceph.conf');
  writeFileSync(
    conf,
    [
      '[global]',
      `fsid = ${fsid}`,
      `mon host = v2:127.0.0.1:${monPort}`,
      'mon initial members = a',
      'public addr = 127.0.0.1',
      'ms bind msgr1 = false',
      'auth cluster required = none',
      'auth service required = none',
      'auth client required = none',
      // radosgw's default mode is "secure" only, which no mode of auth=none satisfies.
      'ms mon client mode = crc secure',
      `run dir = ${dir}/run`,
      `admin socket = ${dir}/run/$cluster-$name.asok`,
      `pid file = ${dir}/run/$name.pid`,
      `log file = ${dir}/log/$name.log`,
      'osd pool default size = 1',
      'osd pool default min size = 1',
      'osd pool default pg num = 8',
      'osd pool default pgp num = 8',
      'osd pool default pg autoscale mode = off',
      'osd crush chooseleaf type = 0',
      'mon allow pool size one = true',
      'mon allow pool delete = true',
      'mon max pg per osd = 1000',
      'mon warn on pool no redundancy = false',
      'mon warn on insecure global id reclaim allowed = false',
      'mon data avail warn = 1',
      // Each pool radosgw creates takes about 2 s with the default paxos pace.
      'paxos propose interval = 0.01',
      'paxos min wait = 0.001',
      '[mon]',
      `mon data = ${dir}/mon.$id`,
      `mon cluster log file = ${dir}/log/cluster.log`,
      '[osd]',
      `osd data = ${dir}/osd.$id`,
      'osd objectstore = memstore',
      'memstore device bytes = 1073741824',
      '[client.rgw.a]',
      // Without it radosgw holds a response body back until the client acks its headers (about 40 ms, delayed ACK).
      `rgw frontends = beast endpoint=127.0.0.1:${rgwPort} tcp_nodelay=1`,
      `rgw data = ${dir}/rgw`,
      'rgw sts key = lancecatalogtest',
      'rgw s3 auth use sts = true',
      `rgw sts min session duration = ${options.minSessionSeconds ?? 900}`,
      'rgw enable apis = s3, sts, iam, admin',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, CEPH_CONF: conf };
  const ceph = (command: string, args: string[]) => run(command, args, { env, cwd: dir }).then((r) => r.stdout.trim());

  const children: ChildProcess[] = [];
  const launch = (command: string, args: string[]) => {
    // -f: in the foreground, so each daemon is a child of this process and ends with it.
    const child = spawn(command, ['-f', ...args], { env, cwd: dir, stdio: 'ignore' });
    children.push(child);
    return child;
  };
  const ended = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(children.map(ended));
    rmSync(dir, { recursive: true, force: true });
  };

  const createRole = async (name: string, prefixes: string[], trust: { chainable?: boolean } = {}) => {
    await ceph('radosgw-admin', ['role', 'create', `--role-name=${name}`, `--assume-role-policy-doc=${trustPolicy(trust.chainable ?? false)}`]);
    const resources = prefixes.flatMap((p) => [`arn:aws:s3:::${p.split('/')[0]}`, `arn:aws:s3:::${p.replace(/\/+$/, '')}/*`]);
    const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: resources }] };
    await ceph('radosgw-admin', ['role-policy', 'put', `--role-name=${name}`, '--policy-name=tables', `--policy-doc=${JSON.stringify(policy)}`]);
    return `arn:aws:iam:::role/${name}`;
  };

  const endpoint = `http://127.0.0.1:${rgwPort}`;
  let roleArn: string;
  try {
    await ceph('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, join(dir, 'monmap')]);
    await ceph('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap')]);
    launch('ceph-mon', ['-i', 'a']);
    const osdUuid = randomUUID();
    const osd = await ceph('ceph', ['osd', 'new', osdUuid]);
    await ceph('ceph-osd', ['-i', osd, '--mkfs', '--osd-uuid', osdUuid]);
    launch('ceph-osd', ['-i', osd]);
    launch('radosgw', ['-n', 'client.rgw.a']);
    await answering(endpoint, dir);
    await ceph('radosgw-admin', ['user', 'create', '--uid=catalog', '--display-name=Catalog server', `--access-key=${ACCESS_KEY}`, `--secret-key=${SECRET_KEY}`]);
    roleArn = await createRole('lance-tables', ['*']);
  } catch (e) {
    await stop();
    throw e;
  }

  const region = 'us-east-1';
  const client = (credentials = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY } as { accessKeyId: string; secretAccessKey: string; sessionToken?: string }) =>
    // RGW refuses the SDK's default streamed checksums (411 MissingContentLength).
    new S3Client({ endpoint, region, forcePathStyle: true, credentials, maxAttempts: 1, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  const s3 = client();

  return {
    endpoint,
    region,
    accessKeyId: ACCESS_KEY,
    secretAccessKey: SECRET_KEY,
    roleArn,
    awsEnv: () => ({ AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY, AWS_REGION: region, AWS_ENDPOINT_URL: endpoint }),
    storageOptions: () => ({
      aws_endpoint: endpoint,
      aws_region: region,
      aws_access_key_id: ACCESS_KEY,
      aws_secret_access_key: SECRET_KEY,
      allow_http: 'true',
      aws_virtual_hosted_style_request: 'false',
    }),
    createBucket: async (name) => {
      await s3.send(new CreateBucketCommand({ Bucket: name }));
    },
    createRole,
    setRoleTrust: async (name, trust) => {
      await ceph('radosgw-admin', ['role', 'modify', `--role-name=${name}`, `--assume-role-policy-doc=${trustPolicy(trust.chainable)}`]);
    },
    client,
    admin: (args) => ceph('radosgw-admin', args),
    signed: async (credentials, service, request) => {
      const url = new URL(endpoint);
      const body = request.form ? new URLSearchParams(request.form).toString() : undefined;
      const headers: Record<string, string> = { host: url.host };
      if (body) headers['content-type'] = 'application/x-www-form-urlencoded; charset=utf-8';
      const signer = new SignatureV4({ service, region, credentials, sha256: NodeSha256 });
      const signed = await signer.sign({ method: request.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: request.path, query: request.query ?? {}, headers, body });
      const query = new URLSearchParams(request.query ?? {}).toString();
      const answer = await fetch(`${endpoint}${request.path}${query ? `?${query}` : ''}`, { method: request.method, headers: signed.headers, body });
      return { status: answer.status, body: await answer.text() };
    },
    stop: async () => {
      s3.destroy();
      await stop();
    },
  };
}

/**
 * The trust policy of a vending role: only the catalog's user may assume it, and only with its own
 * long-term keys. RGW matches a role session against the principal of the user that assumed the
 * role, so without the condition a vended session could call AssumeRole itself and get the role's
 * whole reach; `aws:TokenIssueTime` is set for temporary credentials only.
 */
function trustPolicy(chainable: boolean): string {
  const statement: Record<string, unknown> = { Effect: 'Allow', Principal: { AWS: ['arn:aws:iam:::user/catalog'] }, Action: ['sts:AssumeRole'] };
  if (!chainable) statement.Condition = { Null: { 'aws:TokenIssueTime': 'true' } };
  return JSON.stringify({ Version: '2012-10-17', Statement: [statement] });
}

/** SHA-256 and its HMAC for the request signer, from node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = this.fresh();
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

/** Polls `GET /` until radosgw answers (it creates its pools first). */
async function answering(endpoint: string, dir: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${endpoint}/`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`radosgw did not answer at ${endpoint} within 60 s (its configuration and logs are in ${dir})`);
}

