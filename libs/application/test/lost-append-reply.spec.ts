import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideDeclareTable, storePathOf } from '@app/catalog';
import { EventStore, EventStoreUnavailableError, ExpectedRevision, NewEvent, SqliteEventStore } from '@app/event-store';
import { LocalManifestFinaliser } from '@app/lance';
import { Warehouse } from '@app/storage';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter, VersionService } from '../src';

describe('a commit whose append was made but whose answer was lost', () => {
  it('keeps the final manifest the catalog now records', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lost-reply-'));
    const inner = new SqliteEventStore(join(dir, 'events.sqlite3'));
    // The store takes the append, then the connection drops before its answer (PostgreSQL failing over, say).
    let loseNextReply = false;
    const store = Object.create(inner) as EventStore;
    store.append = (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options) =>
      inner.append(streamId, events, expected, options).then((appended) => {
        if (!loseNextReply) return appended;
        loseNextReply = false;
        throw new EventStoreUnavailableError('connection lost');
      });
    const projections = new ProjectionRegistry(store);
    const writer = new CatalogWriter(store, projections);
    const warehouse = new Warehouse(dir);
    const versions = new VersionService(writer, projections, new LocalManifestFinaliser(warehouse), 'synced', undefined, warehouse.files);
    const location = join(dir, 'default', 't.lance');
    await writer.execute({ database: 'default', context: {}, delimiter: '$' }, 'DeclareTable', (view) => ({
      events: decideDeclareTable(view, { id: ['t'], tableUuid: randomUUID(), location, properties: {}, managedVersioning: true }),
      result: () => undefined,
    }));

    // As the edge builds it: the request's arrival time rides in its context.
    const ctx = { database: 'default', context: {}, delimiter: '$', arrivedAt: performance.now() };
    mkdirSync(join(location, '_versions'), { recursive: true });
    const staging = join(location, '_versions', `1.manifest-${randomUUID()}`);
    writeFileSync(staging, 'manifest 1');
    loseNextReply = true;
    const refused = await versions
      .createTableVersion(ctx, { id: ['t'], version: 1, stagingManifestPath: storePathOf(staging), namingScheme: 'V1', timestampMillis: Date.now() })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(Error);

    // The version is in the log: its manifest must be where the catalog says it is.
    const table = (await projections.current('default')).state.table(['t'])!;
    const record = table.versions.get(1);
    expect(record).toBeDefined();
    expect(existsSync(`/${record!.manifestPath!.replace(/^\/+/, '')}`)).toBe(true);
    await store.close();
  });
});
