import { join } from 'node:path';
import { SqliteEventStore } from './embedded/sqlite-event-store';
import { EsdbEventStore } from './esdb/esdb-event-store';
import { EventStore } from './event-store.port';
import { PostgresEventStore } from './postgres/postgres-event-store';

/** The embedded store's file in a data dir. */
export function embeddedStoreFile(dataDir: string): string {
  return join(dataDir, 'events.sqlite3');
}

/** `embedded` → SQLite file in the data dir; `esdb://…` → EventStoreDB; `postgresql://…` → PostgreSQL. */
export function createEventStore(setting: string, dataDir: string, options: { poolSize?: number } = {}): EventStore {
  if (setting === 'embedded') return new SqliteEventStore(embeddedStoreFile(dataDir));
  if (/^esdb(\+discover)?:\/\//.test(setting)) return new EsdbEventStore(setting);
  if (/^postgres(ql)?:\/\//.test(setting)) return new PostgresEventStore(setting, { poolSize: options.poolSize });
  throw new Error(`EVENT_STORE must be 'embedded', an esdb:// or a postgresql:// connection string, got '${setting}'`);
}
