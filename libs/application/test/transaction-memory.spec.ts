import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CatalogState, FORGET_EVERY, foldRecorded } from '@app/catalog';
import { NewEvent, SqliteEventStore } from '@app/event-store';
import { ProjectionRegistry, digestOf, envelopeOf } from '@app/projections';
import { HistoryService, TransactionService } from '../src';

const DAY = 86_400_000;

/**
 * A log of FORGET_EVERY * 3 commits spread over three days, with one index build queued on the
 * first day and never finished, and one that finished: the state keeps the recent transactions
 * and the ones it refers to, the log keeps everything, and every fold of it holds the same state.
 */
describe('transactions in memory follow what is live', () => {
  const store = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'tx-memory-')), 'events.sqlite3'));
  const ctx = { database: 'default', context: {}, delimiter: '$' };
  const start = Date.UTC(2026, 0, 1);
  const events = FORGET_EVERY * 3;
  const at = (i: number) => new Date(start + Math.floor((i / events) * 3 * DAY)).toISOString();
  const first: string[] = [];
  let queuedBuild: string = '';
  let finishedBuild: string = '';

  beforeAll(async () => {
    const batch: NewEvent[] = [];
    const meta = (i: number, operation: string, id: string = randomUUID()) => ({ transactionId: id, operation, occurredAt: at(i) });
    batch.push({ type: 'NamespaceCreated', data: { namespace: ['ns'], properties: {} }, metadata: meta(0, 'CreateNamespace') });
    batch.push({ type: 'TableDeclared', data: { table: ['ns', 't'], tableUuid: 'u', location: '/w/ns/t.lance', properties: {}, managedVersioning: true }, metadata: meta(1, 'DeclareTable') });
    queuedBuild = randomUUID();
    batch.push({ type: 'TableIndexRequested', data: { table: ['ns', 't'], tableUuid: 'u', indexName: 'a', columns: ['x'], indexType: 'BTREE', params: {} }, metadata: meta(2, 'CreateTableIndex', queuedBuild) });
    finishedBuild = randomUUID();
    batch.push({ type: 'TableIndexRequested', data: { table: ['ns', 't'], tableUuid: 'u', indexName: 'b', columns: ['y'], indexType: 'BTREE', params: {} }, metadata: meta(3, 'CreateTableIndex', finishedBuild) });
    batch.push({ type: 'TransactionAltered', data: { transactionId: finishedBuild, status: 'Succeeded', setProperties: { indexed_rows: '5' }, unsetProperties: [] }, metadata: meta(4, 'AlterTransaction') });
    for (let i = batch.length; i < events; i++) {
      const m = meta(i, 'CreateTableVersion');
      if (i < 100) first.push(m.transactionId);
      batch.push({ type: 'TableVersionCreated', data: { table: ['ns', 't'], tableUuid: 'u', version: i, manifestPath: `w/ns/t.lance/_versions/${i}.manifest`, namingScheme: 'V1', timestampMillis: start }, metadata: m });
    }
    for (let i = 0; i < batch.length; i += 5000) await store.append('catalog-default', batch.slice(i, i + 5000), i === 0 ? 'no_stream' : i - 1);
  });
  afterAll(() => store.close());

  it('forgets finished transactions older than the memory, keeps the ones the state refers to, and replays to the same state', async () => {
    const projections = new ProjectionRegistry(store, undefined, DAY);
    const state = (await projections.current('default')).state;
    // Folded to the end: the last forgetting, at the last event (three days in), kept the last day.
    expect(state.transactionCount).toBeLessThan(events * 0.4);
    expect(state.transactionCount).toBeGreaterThan(events * 0.3);
    expect(state.transaction(first[0])).toBeUndefined();
    expect(state.transaction(queuedBuild)?.status).toBe('Queued');
    expect(state.transaction(finishedBuild)?.properties.indexed_rows).toBe('5');
    expect(state.table(['ns', 't'])!.versions.size).toBe(events - 5);

    // Any other fold of the log (a replay, another replica) holds the same state.
    const replayed = new CatalogState();
    for (const e of await store.readStream('catalog-default')) foldRecorded(replayed, envelopeOf(e), DAY);
    expect(digestOf(replayed)).toBe(digestOf(state));
    // Without the memory every transaction stays (the alteration is one of the build's, not its own).
    const whole = (await new ProjectionRegistry(store).current('default')).state;
    expect(whole.transactionCount).toBe(events - 1);
  });

  it('answers DescribeTransaction of a forgotten transaction from the log', async () => {
    const projections = new ProjectionRegistry(store, undefined, DAY);
    const history = new HistoryService(store);
    const transactions = new TransactionService(undefined as never, projections, undefined, (c, id) => history.transactionFromLog(c, id));
    expect(await transactions.describeTransaction(ctx, first[0])).toEqual({
      status: 'Succeeded',
      properties: { operation: 'CreateTableVersion', started_at: at(first.indexOf(first[0]) + 5) },
    });
    await expect(transactions.describeTransaction(ctx, randomUUID())).rejects.toMatchObject({ code: 10 });
  });
});
