import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { PostgresEventStore } from '../src';
import { TestDatabase, createTestDatabase } from '../../../test/support/postgres';

const ROOT = resolve(__dirname, '../../..');
const PAUSE_MS = 4000;

/**
 * A process stopped in the middle of its appends (SIGSTOP, a long collection, a frozen machine)
 * must not stop other processes' appends: every append is one statement that PostgreSQL finishes
 * whether or not its process reads the answer, so the global append lock is never held across a
 * process's round trips.
 */
describe('the PostgreSQL event store and a process paused in the middle of its appends', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('paused');
  });
  afterAll(() => database?.drop());

  it("does not hold other processes' appends", async () => {
    const store = new PostgresEventStore(database.url);
    await store.append('setup', [{ type: 'SchemaReady', data: {} }], 'no_stream');
    const appender = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'test/support/postgres-appender.ts', database.url, '8'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    appender.stderr.on('data', (d) => (output += d));
    try {
      await new Promise<void>((ready, fail) => {
        appender.stdout.on('data', (d) => String(d).includes('appending') && ready());
        appender.once('exit', () => fail(new Error(`the appender ended: ${output}`)));
      });
      appender.kill('SIGSTOP');
      const stoppedAt = Date.now();
      const took: number[] = [];
      const appended = (async () => {
        for (let revision = -1; revision < 4; revision++) {
          const started = Date.now();
          await store.append('beside-the-paused', [{ type: 'Appended', data: {} }], revision < 0 ? 'no_stream' : revision);
          took.push(Date.now() - started);
        }
        return 'appended';
      })();
      const stillStopped = new Promise((r) => setTimeout(() => r(`still waiting after ${PAUSE_MS} ms, ${took.length} of 5 appended`), PAUSE_MS));
      // All five go through while the other process is still stopped, none waiting on it.
      expect(await Promise.race([appended, stillStopped])).toBe('appended');
      expect(Math.max(...took)).toBeLessThan(1000);
      await stillStopped;
    } finally {
      appender.kill('SIGCONT');
      appender.kill('SIGKILL');
      await store.close();
      await new Promise((r) => appender.exitCode !== null || appender.signalCode !== null ? r(undefined) : appender.once('exit', r));
    }
  }, 60_000);
});
