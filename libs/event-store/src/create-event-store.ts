import { join } from 'node:path';
import { SqliteEventStore } from './embedded/sqlite-event-store';
import { EsdbEventStore } from './esdb/esdb-event-store';
import { EventStore } from './event-store.port';

/** `embedded` → SQLite file in the data dir; `esdb://…` → EventStoreDB. */
export function createEventStore(setting: string, dataDir: string): EventStore {
  if (setting === 'embedded') return new SqliteEventStore(join(dataDir, 'events.sqlite3'));
  if (/^esdb(\+discover)?:\/\//.test(setting)) return new EsdbEventStore(setting);
  throw new Error(`EVENT_STORE must be 'embedded' or an esdb:// connection string, got '${setting}'`);
}
