import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * What client-scenario.js reports when every step went as the client expects: 150 rows written in
 * two appends, a filtered count, the nearest row, a btree index, an update and a delete (versions
 * 1 to 5), the reopened table and the table at version 2; no AWS variable in the client's process.
 */
export const CLIENT_SCENARIO_PASSED = {
  awsVariables: [],
  count: 150,
  filtered: 30,
  nearest: 42,
  indices: ['id_idx'],
  versions: [1, 2, 3, 4, 5],
  reopenedCount: 140,
  countAtVersion2: 150,
  tables: ['items'],
};

/**
 * Runs the lancedb client's scenario (client-scenario.js) in a process whose environment holds no
 * AWS variable: all it knows of the warehouse is what the catalog vends.
 */
export function clientScenario(url: string, apiKey = '', namespace = 'shop'): Promise<Record<string, unknown>> {
  return clientProcess('client-scenario.js', [url, apiKey, namespace]);
}

/**
 * A lancedb client that creates `table` and appends to it and counts it for `seconds`, in a
 * process without AWS variables (client-writer.js): how many appends went through, every failure.
 */
export function clientWriter(url: string, apiKey: string, namespace: string, table: string, seconds: number): Promise<Record<string, unknown>> {
  return clientProcess('client-writer.js', [url, apiKey, namespace, table, String(seconds)]);
}

function clientProcess(script: string, args: string[]): Promise<Record<string, unknown>> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  const child = spawn(process.execPath, [join(ROOT, 'test/support', script), ...args], {
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
        fail(new Error(`${script} printed no result:\n${out}\n${err}`));
      }
    }),
  );
}
