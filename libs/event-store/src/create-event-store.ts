import { join } from 'node:path';
import { SqliteEventStore } from './embedded/sqlite-event-store';
import { EventStore } from './event-store.port';

export function createEventStore(setting: string, dataDir: string): EventStore {
  if (setting === 'embedded') return new SqliteEventStore(join(dataDir, 'events.sqlite3'));
  throw new Error(`EVENT_STORE '${setting}' is not supported yet`);
}
