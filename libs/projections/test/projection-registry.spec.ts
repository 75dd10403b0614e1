import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@app/event-store';
import { ProjectionRegistry, catalogStreamOf } from '../src';

async function declareNamespace(store: SqliteEventStore, database: string): Promise<void> {
  const metadata = { transactionId: `tx-${database}`, operation: 'CreateNamespace', occurredAt: new Date().toISOString() };
  await store.append(catalogStreamOf(database), [{ type: 'NamespaceCreated', data: { namespace: ['ns'], properties: {} }, metadata }], 'any');
}

describe('the projections of databases a request names', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'registry-')), 'events.sqlite3'));
  });
  afterEach(() => store.close());

  it('keeps at most a few hundred projections of databases without an event, and every one with events', async () => {
    const registry = new ProjectionRegistry(store);
    await declareNamespace(store, 'real');
    const real = await registry.current('real');
    expect(real.state.namespace(['ns'])).toBeDefined();
    for (let i = 0; i < 5000; i++) {
      const projection = await registry.current(`made-up-${i}`);
      expect(projection.state.revision).toBe(-1);
    }
    const kept = registry.databases();
    expect(kept.length).toBeLessThanOrEqual(257);
    expect(kept.includes('real')).toBe(true);
    expect(kept.includes('made-up-4999')).toBe(true);
    // The one it holds for a database with events is the same object, not made again.
    expect(registry.get('real')).toBe(real);
  });

  it('makes a projection let go of again, and it reads the events recorded since', async () => {
    const registry = new ProjectionRegistry(store);
    const first = await registry.current('late');
    for (let i = 0; i < 1000; i++) registry.get(`made-up-${i}`);
    expect(registry.databases().includes('late')).toBe(false);
    await declareNamespace(store, 'late');
    const again = await registry.current('late');
    expect(again).not.toBe(first);
    expect(again.state.namespace(['ns'])).toBeDefined();
  });
});
