import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../src';
import { describeEventStoreConformance, spawnAckingWriter } from '../src/conformance/event-store-conformance';

const dataDir = mkdtempSync(join(tmpdir(), 'embedded-conformance-'));

describeEventStoreConformance('embedded SQLite', {
  open: async () => new SqliteEventStore(join(dataDir, 'events.sqlite3')),
  spawnWriter: (stream, count) =>
    spawnAckingWriter(join(__dirname, '../src/conformance/acking-writer.ts'), ['embedded', dataDir, stream, String(count)], {}),
});
