import * as lancedb from '@lancedb/lancedb';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Api } from './http';

const ROOT = resolve(__dirname, '../..');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as JSON, when the run was asked for --json. */
  json: any;
}

/** Runs the built `lance-catalog` command (bin/lance-catalog.js) in a process of its own. */
export function lanceCatalog(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runNode(join(ROOT, 'bin/lance-catalog.js'), args, env);
}

/** What `npm run replay` prints for the store `env` names: every database's digest. */
export async function replayDigests(env: Record<string, string>): Promise<Array<{ database: string; digest: string; tables: number; versions: number }>> {
  const run = await runNode(join(ROOT, 'dist/apps/api/src/replay.js'), [], env);
  if (run.code !== 0) throw new Error(`replay failed: ${run.stderr}`);
  return JSON.parse(run.stdout).databases;
}

function runNode(script: string, args: string[], env: Record<string, string>): Promise<CliRun> {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((done) =>
    child.once('exit', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      done({ code: code ?? -1, stdout, stderr, json });
    }),
  );
}

export const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: from + i, vector: [from + i, 1] }));

export interface BuiltTable {
  namespace: string[];
  name: string;
  /** Rows counted at each version of main, by version. */
  rowsAt: Map<number, number>;
  location: string;
}

export interface CatalogShape {
  namespaces: number;
  tablesPerNamespace: number;
  /** Versions of each table's main line (the first is its creation). */
  versionsPerTable: number;
}

/**
 * Writes a catalog through the lancedb client: namespaces of tables, each appended to until it has
 * its versions; the first table of each namespace gets a btree index, a tag and a branch with one
 * version of its own (the branch and tag through the REST binding, which the client has no call for).
 */
export async function writeCatalog(url: string, shape: CatalogShape): Promise<BuiltTable[]> {
  const db = await lancedb.connectNamespace('rest', { uri: url });
  const api = new Api(url);
  const built: BuiltTable[] = [];
  try {
    for (let n = 0; n < shape.namespaces; n++) {
      const namespace = [`ns${n}`];
      await db.createNamespace(namespace);
      for (let t = 0; t < shape.tablesPerNamespace; t++) {
        const name = `t${t}`;
        const table = await db.createTable(name, rows(0, 3), namespace);
        const rowsAt = new Map<number, number>([[1, 3]]);
        let count = 3;
        for (let v = 2; v <= shape.versionsPerTable; v++) {
          await table.add(rows(count, 2));
          count += 2;
          rowsAt.set(await table.version(), count);
        }
        const id = Api.id([...namespace, name]);
        if (t === 0) {
          await table.createIndex('id', { config: lancedb.Index.btree() });
          rowsAt.set(await table.version(), count);
          expect((await api.post(`/v1/table/${id}/tags/create`, { tag: 'first', version: 1 })).status).toBe(200);
          expect((await api.post(`/v1/table/${id}/branches/create`, { name: 'dev' })).status).toBe(200);
          const dev = await db.openTable(name, namespace, { branch: 'dev' });
          await dev.add(rows(10_000, 1));
          dev.close();
        }
        table.close();
        const described = await api.post(`/v1/table/${id}/describe`, {});
        built.push({ namespace, name, rowsAt, location: described.body.location });
      }
    }
  } finally {
    db.close();
  }
  return built;
}

/** Opens every table at every version it had through the lancedb client and counts its rows. */
export async function countEveryVersion(url: string, tables: BuiltTable[]): Promise<Array<{ table: string; version: number; expected: number; counted: number }>> {
  const db = await lancedb.connectNamespace('rest', { uri: url });
  const counted = [];
  try {
    for (const t of tables) {
      const table = await db.openTable(t.name, t.namespace);
      for (const [version, expected] of t.rowsAt) {
        await table.checkout(version);
        counted.push({ table: [...t.namespace, t.name].join('.'), version, expected, counted: await table.countRows() });
      }
      table.close();
    }
  } finally {
    db.close();
  }
  return counted;
}
