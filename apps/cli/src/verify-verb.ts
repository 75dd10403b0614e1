import { CATALOG_EVENT_TYPES, CatalogEvent } from '@app/catalog';
import { replayLog } from '@app/projections';
import { unfinishedLoad } from '@app/event-store';
import { Warehouse } from '@app/storage';
import { CatalogCheck, Finding, RecordedTags } from './catalog-check';
import { EXIT } from './exit-codes';
import { Progress } from './progress';
import { Verb, openExistingStore, shown } from './verb';
import { WarehouseFolders } from './warehouse-folders';

export const verifyVerb: Verb = {
  name: 'verify',
  summary: 'check the catalog against the warehouse\'s files; list what disagrees (never deletes)',
  help: `Usage: lance-catalog verify [--json]

Replays the log EVENT_STORE names and compares it with the files in WAREHOUSE: every recorded
version's manifest is there with its recorded size, every live table's folder is there, every index
Lance lists has its files and every index the catalog built is in Lance, tags and branches agree
with their files, and no folder lies in the warehouse that belongs to no table, dropped table
awaiting purge or namespace. One line per finding, with what to do about it. Nothing is changed.
Exit status 0: nothing found; 1: findings.`,
  options: {},
  async run({ config, json }) {
    const started = Date.now();
    const store = openExistingStore(config.eventStore, config);
    const warehouse = new Warehouse(config.warehouse, config.objectStore);
    const folders = new WarehouseFolders(config);
    const findings: Finding[] = [];
    try {
      const load = await unfinishedLoad(store);
      if (load) {
        findings.push({
          kind: 'unfinished-load',
          database: '*',
          location: shown(config.eventStore),
          problem: `'lance-catalog ${load.verb}', begun ${load.startedAt}, did not finish loading this event store: it holds part of a catalog, and no server starts on it`,
          action: `empty the store and run 'lance-catalog ${load.verb}' again`,
        });
      }
      const tags: RecordedTags = new Map();
      // The log itself first: each database's revisions follow on from 0, and every event is one the catalog knows.
      const known = new Set<string>(CATALOG_EVENT_TYPES);
      const lastRevision = new Map<string, number>();
      const { events, states } = await replayLog(store, config.transactionMemorySeconds * 1000, {
        onEvent: (recorded, database) => {
          const previous = lastRevision.get(database) ?? -1;
          lastRevision.set(database, recorded.revision);
          const location = `${shown(config.eventStore)}, stream ${recorded.streamId}`;
          if (recorded.revision !== previous + 1) {
            findings.push({
              kind: 'log-gap',
              database,
              location,
              problem: `revision ${recorded.revision} follows revision ${previous}: events are missing from the log, and what they recorded is missing from the catalog`,
              action: 'restore the event store from a backup (lance-catalog import of an export), or rebuild it from the warehouse (lance-catalog recover)',
            });
          }
          if (!known.has(recorded.type)) {
            findings.push({
              kind: 'unknown-event',
              database,
              location,
              problem: `the event at revision ${recorded.revision} has a type no version of this catalog writes, '${recorded.type}': what it recorded is not in the catalog`,
              action: 'restore the event store from a backup, or rebuild it from the warehouse (lance-catalog recover)',
            });
          }
          const event = recorded as unknown as CatalogEvent;
          if (event.type !== 'TableTagChanged') return;
          const d = event.data;
          let table = tags.get(d.tableUuid);
          if (!table) tags.set(d.tableUuid, (table = new Map()));
          if (d.change === 'deleted') table.set(d.tag, {});
          else table.set(d.tag, { version: d.version, ...(d.branch ? { branch: d.branch } : {}) });
        },
      });
      const check = new CatalogCheck(warehouse.files, folders, (f) => findings.push(f));
      const total = [...states.values()].reduce((n, s) => n + s.tableCount, 0);
      const progress = new Progress('checking tables', total, json);
      let done = 0;
      let versions = 0;
      for (const [database, state] of states) {
        for (const table of state.allTables()) {
          await check.table(database, state, table, tags);
          versions += table.versions.size;
          progress.update(++done);
        }
      }
      progress.done();
      await check.orphans(warehouse.root, states);
      return {
        exitCode: findings.length ? EXIT.findings : EXIT.ok,
        lines: findings.map((f) => `${f.kind}: ${f.database}${f.table ? ` table ${f.table}` : ''}: ${f.problem} (${f.location}); ${f.action}`),
        summary: {
          event_store: shown(config.eventStore),
          warehouse: warehouse.root,
          events,
          databases: states.size,
          tables: total,
          versions,
          findings: findings.length,
          ...(json ? { found: findings } : {}),
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
