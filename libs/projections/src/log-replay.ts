import { CatalogState, foldRecorded } from '@app/catalog';
import { EventStore, RecordedEvent } from '@app/event-store';
import { digestOf } from './canonical-dump';
import { databaseOfStream, envelopeOf } from './catalog-projection';

const PAGE = 10_000;

export interface ReplayedDatabase {
  database: string;
  revision: number;
  namespaces: number;
  tables: number;
  versions: number;
  transactions: number;
  digest: string;
}

export interface Replay {
  events: number;
  /** Global position of the last event read; undefined for an empty log. */
  lastPosition?: bigint;
  states: Map<string, CatalogState>;
}

/**
 * Folds every database's stream from the whole log, in global order, up to `upTo` (inclusive) when
 * given. `onEvent` sees each database event as read (what verify collects besides the state).
 */
export async function replayLog(
  store: EventStore,
  transactionMemoryMs: number,
  options: { upTo?: bigint; onEvent?: (recorded: RecordedEvent, database: string) => void; onPage?: (events: number) => void } = {},
): Promise<Replay> {
  const states = new Map<string, CatalogState>();
  let events = 0;
  let after: bigint | undefined;
  for (;;) {
    const batch = await store.readAll({ afterPosition: after, maxCount: PAGE });
    for (const recorded of batch) {
      if (options.upTo !== undefined && recorded.position > options.upTo) return { events, lastPosition: after, states };
      after = recorded.position;
      const database = databaseOfStream(recorded.streamId);
      if (database === undefined) continue;
      let state = states.get(database);
      if (!state) states.set(database, (state = new CatalogState()));
      try {
        foldRecorded(state, envelopeOf(recorded), transactionMemoryMs);
      } catch (e) {
        // Which event, for whoever must mend the log: the fold's own message names none.
        throw new Error(`the event at revision ${recorded.revision} of stream ${recorded.streamId} (${recorded.type}) cannot be folded: ${(e as Error).message}`, { cause: e });
      }
      options.onEvent?.(recorded, database);
      events++;
    }
    options.onPage?.(events);
    if (batch.length < PAGE) break;
  }
  return { events, lastPosition: after, states };
}

/** What `npm run replay` prints of each database, digest included, in name order. */
export function describeDatabases(states: Map<string, CatalogState>): ReplayedDatabase[] {
  return [...states]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([database, state]) => ({
      database,
      revision: state.revision,
      namespaces: state.namespaceCount - 1,
      tables: state.tableCount,
      versions: [...state.allTables()].reduce((n, t) => n + t.versions.size, 0),
      transactions: state.transactionCount,
      digest: digestOf(state),
    }));
}
