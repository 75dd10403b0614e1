import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * Runs the lancedb client's scenario (client-scenario.js) in a process whose environment holds no
 * AWS variable: all it knows of the warehouse is what the catalog vends.
 */
export function clientScenario(url: string, apiKey = '', namespace = 'shop'): Promise<Record<string, unknown>> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  const child = spawn(process.execPath, [join(ROOT, 'test/support/client-scenario.js'), url, apiKey, namespace], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((done, fail) =>
    child.once('exit', () => {
      try {
        done(JSON.parse(out.trim().split('\n').pop()!));
      } catch {
        fail(new Error(`the client scenario printed no result:\n${out}\n${err}`));
      }
    }),
  );
}
