import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../src';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 2333,
      host: '127.0.0.1',
      eventStore: 'embedded',
      redisUrl: 'redis://127.0.0.1:6379',
      managedVersioning: true,
      defaultDatabase: 'default',
    });
    expect(c.dataDir).toBe(resolve('./data'));
    expect(c.warehouse).toBe(resolve('./data/warehouse'));
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/x',
      WAREHOUSE: '/tmp/wh',
      EVENT_STORE: 'esdb://localhost:2113?tls=false',
      REDIS_URL: 'redis://r:6380/2',
      MANAGED_VERSIONING: 'false',
      DEFAULT_DATABASE: 'main',
      BODY_LIMIT: '2048',
      LOG_LEVEL: 'debug',
    });
    expect(c).toMatchObject({ port: 9000, host: '0.0.0.0', dataDir: '/tmp/x', warehouse: '/tmp/wh', managedVersioning: false, bodyLimit: 2048 });
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['EVENT_STORE', 'postgres://x'],
    ['REDIS_URL', 'localhost'],
    ['MANAGED_VERSIONING', 'maybe'],
    ['DEFAULT_DATABASE', '../x'],
    ['BODY_LIMIT', '-1'],
    ['LOG_LEVEL', 'loud'],
    ['SELF_URL', 'ftp://x/y'],
  ])('names %s when its value %s is bad', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      expect((e as Error).message).toContain(name);
    }
  });

  it('stops the server process with exit code 2 and the reason', () => {
    const run = spawnSync(process.execPath, [resolve(__dirname, '../../../dist/apps/api/src/main.js')], {
      env: { ...process.env, PORT: 'nope' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('PORT');
  });
});
