import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '@app/event-store';
import { CatalogProjection, catalogStreamOf } from '../src';

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Two connections to one store file: `other` stands for another process appending. */
function stores() {
  const file = join(mkdtempSync(join(tmpdir(), 'head-reads-')), 'events.sqlite3');
  return { store: new SqliteEventStore(file), other: new SqliteEventStore(file) };
}

let declared = 0;
async function declareTable(store: SqliteEventStore): Promise<void> {
  const n = declared++;
  const data = { table: ['ns', `t${n}`], tableUuid: `u${n}`, location: `/wh/ns/t${n}.lance`, properties: {}, managedVersioning: true };
  await store.append(catalogStreamOf('default'), [{ type: 'TableDeclared', data, metadata: { transactionId: `tx${n}`, operation: 'DeclareTable', occurredAt: new Date().toISOString() } }], 'any');
}

/** A projection caught up with one table that another process declared, the turn it read in over. */
async function caughtUp() {
  const { store, other } = stores();
  await declareTable(other);
  const projection = new CatalogProjection(store, 'default');
  await projection.catchUp();
  await turn();
  return { store, other, projection, close: () => Promise.all([store.close(), other.close()]) };
}

/** Whether a catch-up finished before the turn of the event loop it started in ended. */
async function catchesUpWithinTheTurn(projection: CatalogProjection): Promise<boolean> {
  let turnEnded = false;
  setImmediate(() => (turnEnded = true));
  await projection.catchUp();
  return !turnEnded;
}

describe('reading the stream head before an answer', () => {
  it('does not make a lone request wait for the turn of the event loop to end', async () => {
    const { projection, close } = await caughtUp();
    expect(await catchesUpWithinTheTurn(projection)).toBe(true);
    await close();
  });

  it('reads at most twice for all the requests of one turn, and each sees what was appended before it asked', async () => {
    const { store, other, projection, close } = await caughtUp();
    const reads = jest.spyOn(store, 'streamRevision');

    const first = projection.catchUp();
    // Another process appends after the first request asked and before the others did.
    await declareTable(other);
    const rest = Array.from({ length: 10 }, () => projection.catchUp());
    await Promise.all([first, ...rest]);

    expect(reads).toHaveBeenCalledTimes(2);
    expect(projection.state.revision).toBe(1);
    await close();
  });

  it('reads at once again in the next turn, and sees what was appended meanwhile', async () => {
    const { other, projection, close } = await caughtUp();
    await projection.catchUp();
    await turn();
    await declareTable(other);

    expect(await catchesUpWithinTheTurn(projection)).toBe(true);
    expect(projection.state.revision).toBe(1);
    await close();
  });

  it('reads no more for a request already served by a read begun after it arrived, and again for one that arrived after that read', async () => {
    const { store, other, projection, close } = await caughtUp();
    const reads = jest.spyOn(store, 'streamRevision');

    const arrived = performance.now();
    await declareTable(other);
    await projection.catchUp(arrived);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(projection.state.revision).toBe(1);

    // A later step of the same request (its grants were judged by the read above): nothing to read.
    await turn();
    await projection.catchUp(arrived);
    expect(reads).toHaveBeenCalledTimes(1);

    // Another process appends; a request that arrives after that must see it.
    await declareTable(other);
    const next = performance.now();
    await projection.catchUp(next);
    expect(reads).toHaveBeenCalledTimes(2);
    expect(projection.state.revision).toBe(2);
    await close();
  });
});
