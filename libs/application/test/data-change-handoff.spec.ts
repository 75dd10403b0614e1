import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, EventMetadata, decideDeclareTable, storePathOf } from '@app/catalog';
import { EventStore, ExpectedRevision, NewEvent, RecordedEvent, SqliteEventStore } from '@app/event-store';
import { LocalManifestFinaliser } from '@app/lance';
import { Warehouse } from '@app/storage';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter, DataChangeHandoff, VersionService } from '../src';

/** The real embedded store, counting the appends that reach it. */
function countingStore(dir: string): { store: EventStore; appends: () => number } {
  const inner = new SqliteEventStore(join(dir, 'events.sqlite3'));
  let appends = 0;
  const store = Object.create(inner) as EventStore;
  store.append = (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision, options) => {
    appends++;
    return inner.append(streamId, events, expected, options);
  };
  return { store, appends: () => appends };
}

const ctx = { database: 'default', context: {}, delimiter: '$' };
const insertCtx = { database: 'default', context: { request: 'insert' }, delimiter: '$' };

describe('a data change riding on its own commit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'handoff-'));
  const { store, appends } = countingStore(dir);
  const projections = new ProjectionRegistry(store);
  const writer = new CatalogWriter(store, projections);
  const handoff = new DataChangeHandoff();
  const warehouse = new Warehouse(dir);
  const versions = new VersionService(writer, projections, new LocalManifestFinaliser(warehouse), 'synced', handoff, warehouse.files);
  const tables: Record<string, { uuid: string; location: string }> = {};

  /** What Lance does to commit: write a staging manifest in `_versions/`, then ask version/create. */
  function commit(table: string, version: number, by?: string) {
    const { location } = tables[table];
    mkdirSync(join(location, '_versions'), { recursive: true });
    const staging = join(location, '_versions', `${version}.manifest-${randomUUID()}`);
    writeFileSync(staging, `manifest ${table} ${version} ${randomUUID()}`);
    return versions.createTableVersion(
      ctx,
      { id: [table], version, stagingManifestPath: storePathOf(staging), namingScheme: 'V1', timestampMillis: Date.now() },
      by,
    );
  }
  const events = async () => store.readStream('catalog-default') as Promise<Array<RecordedEvent<any, EventMetadata>>>;

  beforeAll(async () => {
    for (const name of ['t', 'other']) {
      const uuid = randomUUID();
      const location = join(dir, 'default', `${name}.lance`);
      await writer.execute(ctx, 'DeclareTable', (view) => ({
        events: decideDeclareTable(view, { id: [name], tableUuid: uuid, location, properties: {}, managedVersioning: true }),
        result: () => undefined,
      }));
      tables[name] = { uuid, location };
    }
  });
  afterAll(() => store.close());

  it('is appended with the commit, in one append, under its own transaction', async () => {
    const before = appends();
    const expected = handoff.expect(insertCtx, { tableUuid: tables.t.uuid, operation: 'Insert', rows: 10 });
    const value = await expected.during('writer-1', () => commit('t', 1, 'writer-1'));
    const { recorded } = expected;
    expect(appends() - before).toBe(1);
    const [created, changed] = (await events()).slice(-2);
    expect(created.type).toBe('TableVersionCreated');
    expect(changed).toMatchObject({ type: 'TableDataChanged', data: { table: ['t'], operation: 'Insert', version: 1, rows: 10 } });
    expect(changed.metadata).toMatchObject({ transactionId: recorded!.transactionId, operation: 'InsertTable', context: { request: 'insert' } });
    expect(created.metadata.transactionId).toBe(value.transaction_id);
    expect(created.metadata.transactionId).not.toBe(recorded!.transactionId);
    expect(recorded!.version).toBe(1);
    const tx = (await projections.current('default')).state.transaction(recorded!.transactionId);
    expect(tx?.properties.operation).toBe('InsertTable');
  });

  it('rides on the retry of a refused commit, and on one commit only', async () => {
    const count = (await events()).length;
    const expected = handoff.expect(insertCtx, { tableUuid: tables.t.uuid, operation: 'Insert', rows: 5 });
    await expected.during('writer-1', async () => {
      // Version 1 exists: refused with 409 code 14, as Lance sees when another writer won the race.
      const refused = await commit('t', 1, 'writer-1').catch((e) => e);
      expect((refused as CatalogError).code).toBe(14);
      await commit('t', 2, 'writer-1');
      // Anything else the same writer committed meanwhile would carry nothing.
      await commit('t', 3, 'writer-1');
    });
    const added = (await events()).slice(count);
    expect(added.map((e) => e.type)).toEqual(['TableVersionCreated', 'TableDataChanged', 'TableVersionCreated']);
    expect(added[1].data).toMatchObject({ version: 2, rows: 5 });
    expect(expected.recorded).toEqual({ transactionId: added[1].metadata.transactionId, version: 2 });
  });

  it('stays with its write: another writer, no writer, another table or a write that never commits carry nothing', async () => {
    const count = (await events()).length;
    const change = { tableUuid: tables.t.uuid, operation: 'Overwrite', rows: 1 } as const;
    const expectations = [1, 2, 3, 4].map(() => handoff.expect(insertCtx, change));
    await expectations[0].during('writer-2', () => commit('t', 4, 'writer-3'));
    await expectations[1].during('writer-2', () => commit('t', 5));
    await expectations[2].during('writer-2', () => commit('other', 1, 'writer-2'));
    await expectations[3].during('writer-2', async () => 'failed before committing');
    expect(expectations.map((e) => e.recorded)).toEqual([undefined, undefined, undefined, undefined]);
    expect((await events()).slice(count).map((e) => e.type)).toEqual(['TableVersionCreated', 'TableVersionCreated', 'TableVersionCreated']);
    // And once the write is over, its writer's next commit carries nothing either.
    await commit('t', 6, 'writer-2');
    expect((await events()).slice(-1)[0].type).toBe('TableVersionCreated');
  });
});
