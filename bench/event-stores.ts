import { join } from 'node:path';
import { Client } from 'pg';
import { EventStore, PostgresEventStore, SqliteEventStore } from '@app/event-store';
import { scratchDir } from './support';

/**
 * The event store a benchmark runs on: the embedded one (a SQLite file in a scratch directory), or,
 * with BENCH_EVENT_STORE=postgresql://user@host:5432/postgres, a fresh database of its own on that
 * PostgreSQL server, dropped afterwards.
 */
export interface BenchEventStore {
  kind: 'embedded' | 'postgresql';
  /** The server's environment for this store (EVENT_STORE, and DATA_DIR for the embedded one). */
  env: Record<string, string>;
  open(): EventStore;
  drop(): Promise<void>;
}

export async function benchEventStore(label: string): Promise<BenchEventStore> {
  const server = process.env.BENCH_EVENT_STORE;
  if (!server) {
    const dataDir = scratchDir(`bench-${label}-`);
    return {
      kind: 'embedded',
      env: { DATA_DIR: dataDir, EVENT_STORE: 'embedded' },
      open: () => new SqliteEventStore(join(dataDir, 'events.sqlite3')),
      drop: async () => undefined,
    };
  }
  const name = `lance_bench_${label}_${process.pid}_${Date.now()}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: server });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    kind: 'postgresql',
    env: { EVENT_STORE: url.toString() },
    open: () => new PostgresEventStore(url.toString()),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
