import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { freePorts } from './ports';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A one-node OpenStack Swift with its s3api middleware: a real S3 server, from Debian's packages
 * (scripts/provision-test-packages.sh installs them), on free ports in a directory of its own.
 * Swift refuses conditional PUTs (`If-None-Match: *` answers 501), as some S3-compatible stores do.
 */
export interface SwiftServer {
  /** `http://127.0.0.1:<port>`: the S3 endpoint. */
  endpoint: string;
  /** The server's own credentials. */
  accessKeyId: string;
  secretAccessKey: string;
  /** A second user of the same account, for clients: what an operator hands out in CLIENT_STORAGE_OPTIONS. */
  clientAccessKeyId: string;
  clientSecretAccessKey: string;
  region: string;
  /** The AWS_* variables a server process reaches this store with. */
  awsEnv(): Record<string, string>;
  /** The Lance storage options the server's own credentials reach this store with. */
  storageOptions(): Record<string, string>;
  /** CLIENT_STORAGE_OPTIONS handing clients the client user's credentials. */
  clientCredentials(): Record<string, string>;
  createBucket(name: string): Promise<void>;
  client(): S3Client;
  /** Stops the S3 endpoint (the proxy): requests are refused until `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

const SWIFT_PYTHON = '/usr/bin/python3';
const SERVERS = ['account', 'container', 'object'] as const;
/** Writes `<kind>.ring.gz` into the directory for each `kind=port` given: one device, one replica. */
const RING_SCRIPT = [
  'import sys',
  'from swift.common.ring import RingBuilder',
  'for spec in sys.argv[2:]:',
  "    kind, port = spec.split('=')",
  '    builder = RingBuilder(8, 1, 1)',
  "    builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1', 'port': int(port), 'device': 'd1', 'weight': 1})",
  '    builder.rebalance()',
  "    builder.get_ring().save(sys.argv[1] + '/' + kind + '.ring.gz')",
].join('\n');

export async function startSwift(): Promise<SwiftServer> {
  const dir = mkdtempSync(join(tmpdir(), 'swift-'));
  const [proxyPort, accountPort, containerPort, objectPort, memcachedPort] = await freePorts(5);
  const ports = { account: accountPort, container: containerPort, object: objectPort };
  mkdirSync(join(dir, 'devices', 'd1'), { recursive: true });
  writeFileSync(
    join(dir, 'swift.conf'),
    '[swift-hash]\nswift_hash_path_suffix = lance-catalog-tests\nswift_hash_path_prefix = lance-catalog-tests\n' +
      '[storage-policy:0]\nname = Policy-0\ndefault = yes\n',
  );
  // The three one-device rings in one Python process: swift-ring-builder's nine runs (create, add,
  // rebalance for each ring) took two thirds of the start.
  execFileSync(SWIFT_PYTHON, ['-c', RING_SCRIPT, dir, ...SERVERS.map((kind) => `${kind}=${ports[kind]}`)], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  for (const kind of SERVERS) {
    writeFileSync(
      join(dir, `${kind}-server.conf`),
      `[DEFAULT]\nbind_ip = 127.0.0.1\nbind_port = ${ports[kind]}\ndevices = ${dir}/devices\nmount_check = false\n` +
        `swift_dir = ${dir}\nuser = root\nworkers = 0\nlog_level = WARNING\n` +
        `[pipeline:main]\npipeline = ${kind}-server\n[app:${kind}-server]\nuse = egg:swift#${kind}\n`,
    );
  }
  const accessKeyId = 'lance:tester';
  const secretAccessKey = 'lance-testing-secret';
  const clientAccessKeyId = 'lance:client';
  const clientSecretAccessKey = 'lance-client-secret';
  writeFileSync(
    join(dir, 'proxy-server.conf'),
    `[DEFAULT]\nbind_ip = 127.0.0.1\nbind_port = ${proxyPort}\nswift_dir = ${dir}\nuser = root\nworkers = 0\nlog_level = WARNING\n` +
      // Without `cache` every S3 request answers 500, without `slo` multipart uploads 501; `copy` serves CopyObject.
      '[pipeline:main]\npipeline = catch_errors gatekeeper proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server\n' +
      '[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n' +
      '[filter:catch_errors]\nuse = egg:swift#catch_errors\n[filter:gatekeeper]\nuse = egg:swift#gatekeeper\n' +
      '[filter:proxy-logging]\nuse = egg:swift#proxy_logging\n' +
      `[filter:cache]\nuse = egg:swift#memcache\nmemcache_servers = 127.0.0.1:${memcachedPort}\n` +
      '[filter:listing_formats]\nuse = egg:swift#listing_formats\n[filter:s3api]\nuse = egg:swift#s3api\nlocation = us-east-1\n' +
      `[filter:tempauth]\nuse = egg:swift#tempauth\nuser_lance_tester = ${secretAccessKey} .admin\nuser_lance_client = ${clientSecretAccessKey} .admin\n` +
      '[filter:copy]\nuse = egg:swift#copy\n[filter:slo]\nuse = egg:swift#slo\n[filter:dlo]\nuse = egg:swift#dlo\n',
  );

  const children: ChildProcess[] = [];
  const launch = (command: string, args: string[]) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    children.push(child);
    return child;
  };
  launch('memcached', ['-u', 'root', '-l', '127.0.0.1', '-p', String(memcachedPort), '-m', '32']);
  for (const kind of SERVERS) launch(SWIFT_PYTHON, [`/usr/bin/swift-${kind}-server`, join(dir, `${kind}-server.conf`)]);
  const startProxy = () => launch(SWIFT_PYTHON, ['/usr/bin/swift-proxy-server', join(dir, 'proxy-server.conf')]);
  let proxy: ChildProcess | undefined = startProxy();

  const endpoint = `http://127.0.0.1:${proxyPort}`;
  const region = 'us-east-1';
  const client = () =>
    new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
  const s3 = client();
  // The proxy answering is not enough: an object server still starting makes a first PUT answer 503.
  const ready = async () => {
    for (let i = 0; i < 300; i++) {
      try {
        for (const port of Object.values(ports)) await listening(port);
        await s3.send(new ListBucketsCommand({}));
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`Swift did not answer at ${endpoint} within 30 s (its configuration is in ${dir})`);
  };
  const ended = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => child.once('exit', () => r()));
  await ready();

  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    clientAccessKeyId,
    clientSecretAccessKey,
    region,
    clientCredentials: () => ({ aws_access_key_id: clientAccessKeyId, aws_secret_access_key: clientSecretAccessKey }),
    awsEnv: () => ({ AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region, AWS_ENDPOINT_URL: endpoint }),
    storageOptions: () => ({
      aws_endpoint: endpoint,
      aws_region: region,
      aws_access_key_id: accessKeyId,
      aws_secret_access_key: secretAccessKey,
      allow_http: 'true',
      aws_virtual_hosted_style_request: 'false',
    }),
    createBucket: async (name) => {
      // The account and container servers may still be starting when the proxy first answers (503).
      for (let attempt = 0; ; attempt++) {
        try {
          await s3.send(new CreateBucketCommand({ Bucket: name }));
          return;
        } catch (e) {
          if (attempt >= 150 || (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 503) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    client,
    pause: async () => {
      if (!proxy) return;
      const stopping = proxy;
      proxy = undefined;
      stopping.kill('SIGKILL');
      await ended(stopping);
    },
    resume: async () => {
      if (proxy) return;
      // The port may linger a moment after the kill.
      for (let attempt = 0; ; attempt++) {
        proxy = startProxy();
        try {
          await ready();
          return;
        } catch (e) {
          if (attempt >= 2) throw e;
        }
      }
    },
    stop: async () => {
      s3.destroy();
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      await Promise.all(children.map(ended));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once something accepts a TCP connection on the port; rejects if nothing does. */
function listening(port: number): Promise<void> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done();
    });
    socket.once('error', fail);
  });
}
