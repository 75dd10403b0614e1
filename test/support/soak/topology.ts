import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RunningBalancer, freePort, startNginx } from '../nginx';
import { RunningServer, startServer, tempDataDir } from '../server';
import { SwiftServer, startSwift } from '../swift';
import { NatsServer, startNats } from '../nats';
import { WebhookReceiver, startWebhookReceiver } from '../webhook-receiver';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startPostgres, startRedis, traversable } = require('../services');

export const SOAK_KEY = 'soak-admin-key-0123456789abcdef';
export const BUCKET = 'warehouse';
/** The JetStream stream the cluster's change feed publishes to. */
export const FEED_STREAM = 'SOAK_FEED';

interface Service {
  url: string;
  stop(): Promise<void>;
}

/** One process of the cluster, restartable on its own port and data directory. */
export interface Node {
  name: string;
  role: 'api' | 'worker';
  server: RunningServer;
  /** What it is started with again after a kill: its port (an API's, so nginx finds it) and directory. */
  port: number;
  dataDir: string;
}

/**
 * The soak's deployment: two API replicas and two workers behind nginx, each with a data directory
 * of its own, over a PostgreSQL and a Redis of the run's own (restartable on their ports and
 * directories) and the S3 warehouse on Swift; its change feed goes to a NATS JetStream of the run's
 * own and to a webhook receiver. Everything a fault needs to stop and start is here.
 */
export class Cluster {
  apis: Node[] = [];
  workers: Node[] = [];
  lb!: RunningBalancer;
  swift!: SwiftServer;
  nats!: NatsServer;
  receiver!: WebhookReceiver;
  private redis!: Service;
  private postgres!: Service;
  private env: Record<string, string> = {};
  /** Every output a node printed before it was killed: what explains an unexpected answer. */
  readonly pastOutput: string[] = [];
  /** Nodes that ended with no fault ending them. */
  readonly crashes: string[] = [];
  private readonly killing = new WeakMap<RunningServer, { by: boolean }>();
  private stopping = false;

  constructor(private readonly dir: string) {}

  get url(): string {
    return this.lb.url;
  }

  async start(): Promise<void> {
    traversable(this.dir);
    const pgDir = join(this.dir, 'postgresql');
    mkdirSync(pgDir, { recursive: true });
    traversable(pgDir);
    // Whatever started is stopped by `stop`, even when another failed.
    const [swift, redis, postgres, nats, receiver] = await Promise.allSettled([
      startSwift(),
      startRedis(join(this.dir, 'redis'), { port: await freePort(), persist: true }),
      startPostgres(pgDir),
      startNats(),
      startWebhookReceiver(),
    ]);
    if (swift.status === 'fulfilled') this.swift = swift.value;
    if (redis.status === 'fulfilled') this.redis = redis.value;
    if (postgres.status === 'fulfilled') this.postgres = postgres.value;
    if (nats.status === 'fulfilled') this.nats = nats.value;
    if (receiver.status === 'fulfilled') this.receiver = receiver.value;
    for (const r of [swift, redis, postgres, nats, receiver]) if (r.status === 'rejected') throw r.reason;
    await this.swift.createBucket(BUCKET);
    this.env = {
      ...this.swift.awsEnv(),
      WAREHOUSE: `s3://${BUCKET}/lance`,
      CLIENT_STORAGE_OPTIONS: JSON.stringify(this.swift.clientCredentials()),
      EVENT_STORE: this.postgres.url,
      REDIS_URL: this.redis.url,
      AUTH_API_KEYS: JSON.stringify([{ principal: 'ops', sha256: createHash('sha256').update(SOAK_KEY).digest('hex'), databases: ['*'], level: 'admin' }]),
      AUTH_SERVICE_KEY: randomBytes(32).toString('hex'),
      QUEUE_PREFIX: `soak-${process.pid}`,
      // A killed worker's job is taken over within 10 s. The lock outlasts every Redis restart and
      // pause the injector makes, as README asks of it: a lock that lapses while its worker still
      // works hands the job to another worker, and both runs do the work.
      JOB_LOCK_MS: '10000',
      JOB_UNAVAILABLE_BASE_DELAY_MS: '500',
      DATA_PLANE_PROCESSES: '1',
      ACCESS_LOG: 'errors',
      CHANGE_FEED_NATS_URL: this.nats.url,
      CHANGE_FEED_NATS_STREAM: FEED_STREAM,
      // A killed or paused publisher is taken over within 3 s.
      CHANGE_FEED_LEASE_SECONDS: '3',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_GIVE_UP_SECONDS: '3600',
    };
    const ports = [await freePort()];
    while (ports.length < 2) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    this.apis = await Promise.all(ports.map((port, i) => this.launch(`api${i}`, 'api', port, tempDataDir('soak-api-'))));
    this.lb = await startNginx(this.apis.map((a) => a.server.url));
    this.workers = await Promise.all([0, 1].map((i) => this.launch(`worker${i}`, 'worker', 0, tempDataDir('soak-worker-'))));
  }

  private async launch(name: string, role: 'api' | 'worker', port: number, dataDir: string): Promise<Node> {
    const env = { ...this.env, PORT: String(port), ...(role === 'worker' ? { CATALOG_URL: this.lb.url } : {}) };
    // Start-up reads the event store: while a fault holds it down, the node tries again.
    for (let attempt = 0; ; attempt++) {
      try {
        const server = await startServer({ entry: role, dataDir, env });
        const killing = { by: false };
        this.killing.set(server, killing);
        // A node that ends without a fault ending it crashed: a product fault the run reports.
        server.process.once('exit', (code, signal) => {
          if (!killing.by && !this.stopping) this.crashes.push(`${name} ended on its own (${signal ?? `exit code ${code}`}):\n${server.output().slice(-3000)}`);
        });
        return { name, role, server, port, dataDir };
      } catch (e) {
        if (attempt >= 20) throw e;
        this.pastOutput.push(`${name} failed to start (attempt ${attempt + 1}): ${String(e).slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** SIGKILL, then the same node again on its port and data directory. */
  async killAndRestart(node: Node): Promise<void> {
    this.killing.get(node.server)!.by = true;
    await node.server.kill9();
    // Enough of a minute of a busy replica that an unexpected answer it gave is still there.
    this.pastOutput.push(`${node.name} before SIGKILL:\n${node.server.output().slice(-4_000_000)}`);
    const again = await this.launch(node.name, node.role, node.port, node.dataDir);
    node.server = again.server;
  }

  /** SIGSTOP for `ms`, then SIGCONT: a replica that stops answering without closing anything. */
  async pause(node: Node, ms: number): Promise<void> {
    node.server.process.kill('SIGSTOP');
    try {
      await new Promise((r) => setTimeout(r, ms));
    } finally {
      node.server.process.kill('SIGCONT');
    }
  }

  async restartRedis(downMs: number): Promise<void> {
    const port = Number(new URL(this.redis.url).port);
    await this.redis.stop();
    await new Promise((r) => setTimeout(r, downMs));
    this.redis = await startRedis(join(this.dir, 'redis'), { port, persist: true });
  }

  async restartPostgres(downMs: number): Promise<void> {
    const port = Number(new URL(this.postgres.url).port);
    await this.postgres.stop();
    await new Promise((r) => setTimeout(r, downMs));
    this.postgres = await startPostgres(join(this.dir, 'postgresql'), { port });
  }

  /** SIGKILL, then NATS again on its port and store: JetStream keeps what it had stored. */
  async restartNats(downMs: number): Promise<void> {
    await this.nats.restart(downMs);
  }

  /** The webhook receiver answers 500 to everything for `ms`. */
  async failReceiver(ms: number): Promise<void> {
    this.receiver.failing.add('*');
    try {
      await new Promise((r) => setTimeout(r, ms));
    } finally {
      this.receiver.failing.delete('*');
    }
  }

  async stopStartSwift(downMs: number): Promise<void> {
    await this.swift.pause();
    await new Promise((r) => setTimeout(r, downMs));
    await this.swift.resume();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const n of [...this.apis, ...this.workers]) n.server.process.kill('SIGCONT');
    await Promise.all(this.workers.map((w) => w.server.kill9()));
    await this.lb?.stop();
    await Promise.all(this.apis.map((a) => a.server.kill9()));
    await Promise.all([this.swift?.stop(), this.redis?.stop(), this.postgres?.stop(), this.nats?.stop(), this.receiver?.close()]);
  }
}
