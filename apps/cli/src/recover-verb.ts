import { randomUUID } from 'node:crypto';
import { CatalogEvent, EventMetadata } from '@app/catalog';
import { describeDatabases, replayLog, catalogStreamOf } from '@app/projections';
import { Warehouse } from '@app/storage';
import { CommandFailure, EXIT } from './exit-codes';
import { loadStore, requireEmptyStore } from './store-loading';
import { OrderedAppender } from './ordered-appender';
import { Progress } from './progress';
import { Verb, openStore, shown } from './verb';
import { FoundDatabase, FoundTable, readWarehouseLayout } from './warehouse-layout';
import { WarehouseFolders } from './warehouse-folders';

/** The operation every recovered event names: the history tells recovered facts from lived ones. */
export const RECOVER_OPERATION = 'RecoverFromWarehouse';

export const recoverVerb: Verb = {
  name: 'recover',
  summary: 'rebuild a lost catalog from the warehouse\'s own files into an empty event store',
  help: `Usage: lance-catalog recover --from-warehouse [--json]

Rebuilds the catalog into the event store EVENT_STORE names, which must be empty (exit 3 otherwise),
from the files in WAREHOUSE alone: databases, namespaces and tables from the folders
(<database>/<namespace>/.../<table folder>), each table's versions, branches and tags from Lance's
own files. Every event is recorded as operation ${RECOVER_OPERATION}. Names come back as their folders
spell them; what only the log knew (properties, transactions, dropped tables, who did what, empty
namespaces) does not come back.`,
  options: { 'from-warehouse': { type: 'boolean' } },
  async run({ values, config, json }) {
    if (values['from-warehouse'] !== true) throw new CommandFailure(EXIT.usage, 'recover needs --from-warehouse (the only source it rebuilds from)');
    const started = Date.now();
    const store = openStore(config.eventStore, config);
    const warehouse = new Warehouse(config.warehouse, config.objectStore);
    const folders = new WarehouseFolders(config);
    try {
      await requireEmptyStore(store, config.eventStore, 'recover only fills an empty store');
      const reading = new Progress('reading tables', undefined, json);
      let read = 0;
      const found = await readWarehouseLayout(warehouse.root, warehouse.files, folders, () => reading.update(++read));
      reading.done();
      const appender = new OrderedAppender(store);
      const writing = new Progress('recording tables', read, json);
      let recorded = 0;
      await loadStore(store, 'recover', async () => {
        for (const database of found) {
          let revision = 0;
          const streamId = catalogStreamOf(database.database);
          for (const events of eventsOf(database, config.managedVersioning)) {
            const metadata: EventMetadata = { transactionId: randomUUID(), operation: RECOVER_OPERATION, occurredAt: new Date().toISOString(), principal: 'lance-catalog recover' };
            for (const event of events) await appender.add({ streamId, revision: revision++, id: randomUUID(), type: event.type, data: event.data, metadata });
            await appender.flush();
            writing.update(++recorded);
          }
        }
      });
      writing.done();
      const databases = describeDatabases((await replayLog(store, config.transactionMemorySeconds * 1000)).states);
      const skipped = found.flatMap((d) => d.skipped);
      return {
        exitCode: EXIT.ok,
        lines: skipped.map((s) => `skipped: ${s} holds no committed version and is no namespace folder`),
        summary: {
          event_store: shown(config.eventStore),
          warehouse: warehouse.root,
          databases: databases.length,
          namespaces: found.reduce((n, d) => n + d.namespaces.length, 0),
          tables: databases.reduce((n, d) => n + d.tables, 0),
          versions: databases.reduce((n, d) => n + d.versions, 0),
          branches: found.reduce((n, d) => n + d.tables.reduce((m, t) => m + t.branches.length, 0), 0),
          tags: found.reduce((n, d) => n + d.tables.reduce((m, t) => m + Object.keys(t.tags).length, 0), 0),
          events: appender.appended,
          skipped_folders: skipped.length,
          digests: databases.map((d) => ({ database: d.database, digest: d.digest })),
          seconds: (Date.now() - started) / 1000,
        },
      };
    } finally {
      folders.close();
      warehouse.close();
      await store.close();
    }
  },
};

/** One database's events, in groups of one transaction each: the namespaces, then each table whole. */
function* eventsOf(database: FoundDatabase, managedVersioning: boolean): Generator<CatalogEvent[]> {
  if (database.namespaces.length) yield database.namespaces.map((namespace): CatalogEvent => ({ type: 'NamespaceCreated', data: { namespace, properties: {} } }));
  for (const table of database.tables) yield tableEvents(table, managedVersioning);
}

function tableEvents(t: FoundTable, managedVersioning: boolean): CatalogEvent[] {
  const of = { table: t.id, tableUuid: t.uuid };
  const events: CatalogEvent[] = [{ type: 'TableRegistered', data: { ...of, location: t.location, properties: {}, managedVersioning, versions: t.versions } }];
  for (const b of t.branches) {
    events.push({
      type: 'TableBranchCreated',
      data: { ...of, branch: b.name, ...(b.parentBranch ? { parentBranch: b.parentBranch } : {}), parentVersion: b.parentVersion, createdAtMillis: b.createdAtMillis, recordedBy: 'CreateTableBranch' },
    });
    for (const v of b.versions) events.push({ type: 'TableVersionCreated', data: { ...of, ...v, branch: b.name } });
  }
  for (const [tag, record] of Object.entries(t.tags).sort(([a], [b]) => (a < b ? -1 : 1))) {
    events.push({ type: 'TableTagChanged', data: { ...of, tag, change: 'created', version: record.version, ...(record.branch ? { branch: record.branch } : {}) } });
  }
  return events;
}
