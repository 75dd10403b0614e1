import { RunningServer, startServer, tempDataDir } from './server';

/**
 * An API process started before any worker, on a data directory and queue prefix of the suite's
 * own, so a test can queue jobs first and start the worker when it wants them run. Both are
 * stopped after the suite.
 */
export function apiBeforeWorker(name: string) {
  const dataDir = tempDataDir();
  const env = { QUEUE_PREFIX: `${name}-${process.pid}-${Date.now()}` };
  const servers: { api?: RunningServer; worker?: RunningServer } = {};
  beforeAll(async () => {
    servers.api = await startServer({ dataDir, entry: 'api', env });
  }, 60_000);
  afterAll(async () => {
    await servers.worker?.stop();
    await servers.api?.stop();
  });
  return {
    get url(): string {
      return servers.api!.url;
    },
    async startWorker(extra: Record<string, string> = {}): Promise<RunningServer> {
      servers.worker = await startServer({ dataDir, entry: 'worker', env: { ...env, CATALOG_URL: servers.api!.url, ...extra } });
      return servers.worker;
    },
  };
}
