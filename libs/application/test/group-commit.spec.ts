import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, decideCreateNamespace } from '@app/catalog';
import { EventStore, EventStoreUnavailableError, NewEvent, ExpectedRevision, SqliteEventStore } from '@app/event-store';
import { ProjectionRegistry } from '@app/projections';
import { CatalogWriter, NamespaceService } from '../src';

/** The real embedded store, counting the appends that reach it. */
function countingStore(): { store: EventStore; appends: () => number } {
  const inner = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'group-commit-')), 'events.sqlite3'));
  let appends = 0;
  const store = Object.create(inner) as EventStore;
  store.append = (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => {
    appends++;
    return inner.append(streamId, events, expected);
  };
  return { store, appends: () => appends };
}

describe('group commit', () => {
  it('appends concurrent commands together, each with its own transaction and answer', async () => {
    const { store, appends } = countingStore();
    const projections = new ProjectionRegistry(store);
    const namespaces = new NamespaceService(new CatalogWriter(store, projections), projections);
    const ctx = { database: 'default', context: {}, delimiter: '$' };
    const names = Array.from({ length: 60 }, (_, i) => `ns${i % 50}`);
    const results = await Promise.allSettled(names.map((n) => namespaces.createNamespace(ctx, { id: [n], mode: 'Create', properties: {} })));

    const ok = results.filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ transaction_id: string }>[];
    const refused = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(50);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect((r.reason as CatalogError).code).toBe(2);
    expect(new Set(ok.map((r) => r.value.transaction_id)).size).toBe(50);
    // Far fewer durable writes than commands: they were grouped.
    expect(appends()).toBeLessThan(10);
    const state = (await projections.current('default')).state;
    expect(state.revision).toBe(49);
    expect(state.childNamespaces([]).size).toBe(50);
    await store.close();
  });

  it('answers a command whose side effects follow its record only once they are done, and holds no other command back meanwhile', async () => {
    const { store } = countingStore();
    const projections = new ProjectionRegistry(store);
    const writer = new CatalogWriter(store, projections);
    const ctx = { database: 'default', context: {}, delimiter: '$' };
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const answered: string[] = [];
    const create = (name: string, published?: () => Promise<void>) =>
      writer
        .execute(ctx, 'CreateNamespace', (view) => ({
          events: decideCreateNamespace(view, { id: [name], mode: 'Create', properties: {} }),
          ...(published ? { prepare: async () => ({ undo: async () => undefined, published }) } : {}),
          result: () => name,
        }))
        .then((n) => answered.push(n));
    const first = create('copied', () => gate);
    // Recorded, not answered: its copy is still under way.
    await new Promise((r) => setTimeout(r, 50));
    expect((await projections.current('default')).state.namespace(['copied'])).toBeDefined();
    expect(answered).toEqual([]);
    await create('next');
    expect(answered).toEqual(['next']);
    open();
    await first;
    expect(answered).toEqual(['next', 'copied']);
    await store.close();
  });

  it('decides again, rather than refuses, a command refused only for the events of a command whose append then failed', async () => {
    const inner = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'group-commit-')), 'events.sqlite3'));
    // The store is lost under the first append (PostgreSQL restarting, say), and back for the next.
    let failNext = true;
    const store = Object.create(inner) as EventStore;
    store.append = (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => {
      if (!failNext) return inner.append(streamId, events, expected);
      failNext = false;
      return Promise.reject(new EventStoreUnavailableError('connection lost'));
    };
    const projections = new ProjectionRegistry(store);
    const namespaces = new NamespaceService(new CatalogWriter(store, projections), projections);
    const ctx = { database: 'default', context: {}, delimiter: '$' };
    // Both in one group: the second is decided on a draft where the first created the namespace.
    const [first, second] = await Promise.allSettled([
      namespaces.createNamespace(ctx, { id: ['twice'], mode: 'Create', properties: { by: 'first' } }),
      namespaces.createNamespace(ctx, { id: ['twice'], mode: 'Create', properties: { by: 'second' } }),
    ]);
    expect(first.status === 'rejected' && (first.reason as CatalogError).code).toBe(17);
    // Not "already exists": no commit holds the namespace; decided again, it creates it.
    expect(second.status).toBe('fulfilled');
    const state = (await projections.current('default')).state;
    expect(state.namespace(['twice'])?.properties).toEqual({ by: 'second' });
    await store.close();
  });
});
