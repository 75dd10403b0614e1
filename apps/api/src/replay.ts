import { loadConfigOrExit } from '@app/config';
import { createEventStore } from '@app/event-store';
import { describeDatabases, replayLog } from '@app/projections';

/**
 * `npm run replay`: rebuilds every database's projection from the whole log, in global order,
 * and prints what it holds with a digest of the canonical state. Projections live in memory and
 * every process rebuilds them this same way when it starts, so this is also the proof that the
 * log alone is the source of truth.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const store = createEventStore(config.eventStore, config.dataDir, { poolSize: config.eventStorePoolSize });
  const started = process.hrtime.bigint();
  const { events, states } = await replayLog(store, config.transactionMemorySeconds * 1000);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const databases = describeDatabases(states);
  console.log(JSON.stringify({ events, seconds, events_per_second: Math.round(events / Math.max(seconds, 1e-9)), databases }, null, 2));
  await store.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
