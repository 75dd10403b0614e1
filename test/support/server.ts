import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

export interface RunningServer {
  url: string;
  dataDir: string;
  process: ChildProcess;
  output: () => string;
  /**
   * The output once it matches: the server logs asynchronously, so a line may reach the pipe after
   * the HTTP answer or the file change it accompanies.
   */
  outputMatching(pattern: RegExp | string, ms?: number): Promise<string>;
  /** SIGTERM, then wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL: no chance to flush anything. */
  kill9(): Promise<void>;
}

export interface ServerOptions {
  dataDir?: string;
  env?: Record<string, string>;
  /** Which compiled entry point runs: both roles, the API alone, or a worker alone. */
  entry?: 'standalone' | 'api' | 'worker';
}

/** A fresh data directory (under the test run's own temporary directory, removed when the run ends). */
export function tempDataDir(prefix = 'lance-catalog-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Starts the real, compiled server process (`npm run build` ran first) and waits until it serves. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const script = {
    api: 'dist/apps/api/src/main.js',
    worker: 'dist/apps/worker/src/main.js',
    standalone: 'dist/apps/api/src/standalone.js',
  }[options.entry ?? 'standalone'];
  const child = spawn(process.execPath, [join(ROOT, script)], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      QUEUE_PREFIX: `test-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
      LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000);
    const onData = () => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (m || (options.entry === 'worker' && /worker started/.test(output))) {
        clearTimeout(timer);
        resolveUrl(m ? m[1] : '');
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  if (url) await waitForHealthy(url);
  let stopping = false;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // A server that ends without being told to is what a failing test most needs to show.
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`server ${url || script} ended on its own (${signal ?? `exit code ${code}`}); its last output:\n${output.slice(-6000)}`);
  });
  return {
    url,
    dataDir,
    process: child,
    output: () => output,
    async outputMatching(pattern, ms = 10_000) {
      const matches = () => (typeof pattern === 'string' ? output.includes(pattern) : pattern.test(output));
      const deadline = Date.now() + ms;
      while (!matches() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return output;
    },
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill9() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

async function waitForHealthy(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not yet accepting connections
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url}/healthz never answered 200`);
}
