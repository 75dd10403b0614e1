import { CatalogState, foldRecorded } from '@app/catalog';
import { loadConfigOrExit } from '@app/config';
import { createEventStore } from '@app/event-store';
import { digestOf, envelopeOf } from '@app/projections';

const PAGE = 10_000;
const STREAM_PREFIX = 'catalog-';

/**
 * `npm run replay`: rebuilds every database's projection from the whole log, in global order,
 * and prints what it holds with a digest of the canonical state. Projections live in memory and
 * every process rebuilds them this same way when it starts, so this is also the proof that the
 * log alone is the source of truth.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const store = createEventStore(config.eventStore, config.dataDir, { poolSize: config.eventStorePoolSize });
  const states = new Map<string, CatalogState>();
  const started = process.hrtime.bigint();
  let events = 0;
  let after: bigint | undefined;
  for (;;) {
    const batch = await store.readAll({ afterPosition: after, maxCount: PAGE });
    for (const recorded of batch) {
      after = recorded.position;
      if (!recorded.streamId.startsWith(STREAM_PREFIX)) continue;
      const database = recorded.streamId.slice(STREAM_PREFIX.length);
      let state = states.get(database);
      if (!state) states.set(database, (state = new CatalogState()));
      foldRecorded(state, envelopeOf(recorded), config.transactionMemorySeconds * 1000);
      events++;
    }
    if (batch.length < PAGE) break;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const databases = [...states].sort(([a], [b]) => (a < b ? -1 : 1)).map(([database, state]) => ({
    database,
    revision: state.revision,
    namespaces: state.namespaceCount - 1,
    tables: state.tableCount,
    versions: [...state.allTables()].reduce((n, t) => n + t.versions.size, 0),
    transactions: state.transactionCount,
    digest: digestOf(state),
  }));
  console.log(JSON.stringify({ events, seconds, events_per_second: Math.round(events / Math.max(seconds, 1e-9)), databases }, null, 2));
  await store.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
