import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { accessLog } from '../src/access-log';

const ROOT = resolve(__dirname, '../../..');

function fileLogger(file: string) {
  return pino({ level: 'info', base: { role: 'test' } }, pino.destination({ dest: file, sync: false, mkdir: true }));
}

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function waitFor<T>(probe: () => T | undefined, ms = 2_000): Promise<T> {
  for (let waited = 0; waited < ms; waited += 10) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`nothing within ${ms} ms`);
}

describe('access log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'access-log-'));

  it('writes lines in pino’s shape, together, soon after the requests', async () => {
    const file = join(dir, 'batched.log');
    const log = accessLog(fileLogger(file), 'all');
    for (let i = 0; i < 50; i++) log({ id: `r${i}`, method: 'GET', url: `/v1/x?i=${i}`, status: 200, ms: 0.5 });
    const written = await waitFor(() => {
      try {
        const all = lines(file);
        return all.length === 50 ? all : undefined;
      } catch {
        return undefined;
      }
    });
    expect(written.map((l) => l.reqId)).toEqual(Array.from({ length: 50 }, (_, i) => `r${i}`));
    expect(written[7]).toMatchObject({ level: 30, role: 'test', req: { method: 'GET', url: '/v1/x?i=7' }, res: { statusCode: 200 }, msg: 'request completed' });
    expect(typeof written[7].time).toBe('number');
  });

  it('keeps only answers of 400 and above with errors, and nothing with off', async () => {
    const file = join(dir, 'errors.log');
    const errors = accessLog(fileLogger(file), 'errors');
    errors({ id: 'fine', method: 'GET', url: '/a', status: 200, ms: 1 });
    errors({ id: 'bad', method: 'GET', url: '/b', status: 404, ms: 1 });
    const written = await waitFor(() => {
      try {
        const all = lines(file);
        return all.length ? all : undefined;
      } catch {
        return undefined;
      }
    });
    expect(written.map((l) => l.reqId)).toEqual(['bad']);
    const offFile = join(dir, 'off.log');
    const off = accessLog(fileLogger(offFile), 'off');
    off({ id: 'x', method: 'GET', url: '/c', status: 500, ms: 1 });
    await new Promise((r) => setTimeout(r, 250));
    expect(readFileSync(offFile, 'utf8')).toBe('');
  });

  it('writes the lines still pending when the process exits', () => {
    const file = join(dir, 'exit.log');
    // The compiled module, in a process of its own that exits right after logging.
    const script = `
      const pino = require('pino');
      const { accessLog } = require(${JSON.stringify(join(ROOT, 'dist/libs/nest-wiring/src/access-log.js'))});
      const destination = pino.destination({ dest: ${JSON.stringify(file)}, sync: false });
      process.once('exit', () => destination.flushSync());
      const log = accessLog(pino({ level: 'info' }, destination), 'all');
      destination.on('ready', () => {
        for (let i = 0; i < 3; i++) log({ id: 'last-' + i, method: 'POST', url: '/v1/y', status: 201, ms: 2 });
        process.exit(0);
      });`;
    const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(lines(file).map((l) => l.reqId)).toEqual(['last-0', 'last-1', 'last-2']);
  });
});
