import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogState, evolve } from '@app/catalog';
import { SqliteEventStore } from '@app/event-store';
import { CatalogProjection, canonicalDump, digestOf } from '../src';

/** A state with `transactions` transactions (ids in no particular order), tables and versions. */
function stateWith(transactions: number): CatalogState {
  const state = new CatalogState();
  let revision = 0;
  // Ids whose order of arrival differs from their sorted order, some sharing long prefixes.
  const id = (i: number) => `${((i * 7919) % 1000).toString(36)}-${(i * 104729).toString(16)}-${i}`;
  const fold = (event: any, i: number) => {
    evolve(state, { event, metadata: { transactionId: id(i), operation: 'Op', occurredAt: `t${i}` }, revision });
    state.revision = revision++;
  };
  fold({ type: 'NamespaceCreated', data: { namespace: ['ns'], properties: {} } }, 0);
  for (let i = 1; i < transactions; i++) {
    const t = i % 500;
    if (i <= 500) fold({ type: 'TableDeclared', data: { table: ['ns', `t${t}`], tableUuid: `u${t}`, location: `/wh/ns/t${t}.lance`, properties: {}, managedVersioning: true } }, i);
    else fold({ type: 'TableVersionCreated', data: { table: ['ns', `t${t}`], tableUuid: `u${t}`, version: Math.floor(i / 500), manifestPath: `wh/ns/t${t}.lance/_versions/${i}.manifest`, namingScheme: 'V2', timestampMillis: i } }, i);
  }
  return state;
}

const definition = (state: CatalogState) => createHash('sha256').update(JSON.stringify(canonicalDump(state))).digest('hex');

describe('the catalog digest', () => {
  it('is the SHA-256 of the canonical dump, also when the transaction ids are sorted in many runs and merged', () => {
    for (const n of [1, 40, 120_001]) {
      const state = stateWith(n);
      expect(digestOf(state)).toBe(definition(state));
    }
  });

  it('is worked out in steps that let other work run in between, and the state does not move meanwhile', async () => {
    const store = new SqliteEventStore(join(mkdtempSync(join(tmpdir(), 'digest-')), 'events.sqlite3'));
    const events = Array.from({ length: 60_000 }, (_, i) =>
      i === 0
        ? { type: 'NamespaceCreated', data: { namespace: ['ns'], properties: {} }, metadata: { transactionId: `x${i}`, operation: 'Op', occurredAt: 'now' } }
        : { type: 'NamespaceCreated', data: { namespace: [`n${i}`], properties: {} }, metadata: { transactionId: `x${i}`, operation: 'Op', occurredAt: 'now' } },
    );
    await store.append('catalog-default', events, 'no_stream');
    const projection = new CatalogProjection(store, 'default');
    await projection.catchUp();
    const expected = digestOf(projection.state);

    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const digest = projection.digest();
    // A write acknowledged while the digest runs is folded after it, not into it.
    await store.append('catalog-default', [{ type: 'NamespaceCreated', data: { namespace: ['late'], properties: {} }, metadata: { transactionId: 'late', operation: 'Op', occurredAt: 'now' } }], 59_999);
    const caughtUp = projection.catchUp();
    expect(await digest).toEqual({ revision: 59_999, digest: expected });
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(3);
    await caughtUp;
    expect(projection.state.revision).toBe(60_000);
    await store.close();
  });
});
