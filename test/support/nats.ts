import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

/**
 * A NATS server with JetStream of the test's own (Debian's `nats-server`), on a free port with its
 * store in a directory of its own, so `restart` keeps what the stream holds. The NATS that may run
 * at 127.0.0.1:4222 on these machines is never touched.
 */
export interface NatsServer {
  url: string;
  port: number;
  storeDir: string;
  /** SIGKILL, then start it again on the same port and store. */
  restart(downMs?: number): Promise<void>;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** `maxPayload`: the largest message the server takes (NATS's default is 1 MiB). */
export async function startNats(options: { maxPayload?: number } = {}): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-js-'));
  const config = join(storeDir, 'nats.conf');
  writeFileSync(config, options.maxPayload ? `max_payload: ${options.maxPayload}\n` : '');
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    output = '';
    child = spawn(NATS_SERVER, ['-c', config, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 20_000;
    while (!/Server is ready/.test(output)) {
      if (child.exitCode !== null) throw new Error(`nats-server exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not start in 20 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise<void>((resolve, reject) => {
      const socket = connectTcp(port, '127.0.0.1', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', reject);
    });
  };
  const end = async (signal: NodeJS.Signals) => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    start,
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    async restart(downMs = 500) {
      await end('SIGKILL');
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
  };
}
