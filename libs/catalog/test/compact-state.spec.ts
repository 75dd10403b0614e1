import { randomUUID } from 'node:crypto';
import {
  CatalogState,
  DraftCatalog,
  TableVersions,
  TransactionState,
  TransactionTable,
  UuidSlots,
  VersionRecord,
  evolve,
  finalManifestName,
  isoMillis,
} from '../src';
import { declared, fold, stateOf, meta, ns, version } from './support';

const LOCATION = '/wh/default/a/t-1.lance';
const DIR = 'wh/default/a/t-1.lance/_versions/';

function record(v: number, extra: Partial<VersionRecord> = {}): VersionRecord {
  return { version: v, manifestPath: DIR + finalManifestName(v, 'V2'), namingScheme: 'V2', timestampMillis: 1_700_000_000_000 + v, ...extra };
}

describe('finalManifestName', () => {
  it('gives the V2 name of 2^64-1-version for every safe integer it is likely to meet', () => {
    const U64 = (1n << 64n) - 1n;
    for (const v of [0, 1, 9, 10, 4096, 2 ** 32, 1e10 - 1, 1e10, 1e10 + 1, 3709551615, 3709551616, 123456789012345, Number.MAX_SAFE_INTEGER]) {
      expect(finalManifestName(v, 'V2')).toBe(`${(U64 - BigInt(v)).toString().padStart(20, '0')}.manifest`);
    }
    expect(finalManifestName(7, 'V1')).toBe('7.manifest');
  });
});

describe('TableVersions', () => {
  it('gives back each record as it was added, whether its path can be derived or not', () => {
    const versions = new TableVersions(LOCATION);
    const records = [
      record(1),
      record(2, { manifestSize: 512 }),
      { version: 3, manifestPath: `${DIR}3.manifest`, namingScheme: 'V1' as const, timestampMillis: 5, eTag: 'e3' },
      record(4, { manifestPath: 'somewhere/else/4.manifest', metadata: { k: 'v' } }),
      record(5, { manifestPath: `${DIR}5.manifest` }),
      record(6, { manifestSize: 0, eTag: '', metadata: {} }),
    ];
    for (const r of records) versions.add(r);
    for (const r of records) expect(versions.get(r.version)).toEqual(r);
    expect(versions.values()).toEqual(records);
    expect(versions.size).toBe(6);
    expect(versions.latest()).toBe(6);
    expect(versions.get(7)).toBeUndefined();
  });

  it('lists fields in the order a commit writes them, so the canonical dump does not depend on storage', () => {
    const versions = new TableVersions(LOCATION);
    versions.add({ manifestSize: 3, eTag: 'e', timestampMillis: 9, namingScheme: 'V2', manifestPath: 'x', version: 1, metadata: { a: 'b' } });
    expect(Object.keys(versions.get(1)!)).toEqual(['version', 'manifestPath', 'namingScheme', 'timestampMillis', 'manifestSize', 'eTag', 'metadata']);
  });

  it('keeps versions ordered whatever order they arrive in, replaces an existing one and deletes', () => {
    const versions = new TableVersions(LOCATION);
    for (const v of [5, 1, 3, 9, 7]) versions.add(record(v));
    versions.add(record(3, { manifestSize: 33 }));
    expect(versions.keys()).toEqual([1, 3, 5, 7, 9]);
    expect(versions.get(3)!.manifestSize).toBe(33);
    expect(versions.delete(9)).toBe(true);
    expect(versions.delete(9)).toBe(false);
    expect(versions.delete(1)).toBe(true);
    expect(versions.keys()).toEqual([3, 5, 7]);
    expect(versions.latest()).toBe(7);
    expect(versions.has(1)).toBe(false);
    expect(versions.has(5)).toBe(true);
  });

  it('a draft sees its own changes and the base sees none of them', () => {
    const base = new TableVersions(LOCATION);
    for (let v = 1; v <= 5; v++) base.add(record(v));
    const draft = base.draft();
    draft.add(record(6));
    draft.delete(5);
    draft.delete(2);
    draft.add(record(2, { manifestSize: 1 }));
    expect(draft.keys()).toEqual([1, 2, 3, 4, 6]);
    expect(draft.size).toBe(5);
    expect(draft.latest()).toBe(6);
    expect(draft.get(2)!.manifestSize).toBe(1);
    expect(draft.values().map((r) => r.version)).toEqual([1, 2, 3, 4, 6]);
    draft.delete(6);
    expect(draft.latest()).toBe(4);
    expect(base.keys()).toEqual([1, 2, 3, 4, 5]);
    expect(base.get(2)).toEqual(record(2));
    expect(base.size).toBe(5);
  });
});

describe('a draft catalog over a table with many versions', () => {
  it('layers new versions over the table instead of copying them, and leaves the base alone', () => {
    const state = stateOf(ns('a'), declared(['a', 't']));
    for (let v = 1; v <= 2000; v++) fold(state, [version(['a', 't'], v)]);
    const baseVersions = state.table(['a', 't'])!.versions;
    const draft = new DraftCatalog(state);
    const copy = draft.tableForUpdate(['a', 't'])!;
    evolve(draft, { event: version(['a', 't'], 2001), metadata: meta(), revision: -1 });
    expect(copy.versions).not.toBe(baseVersions);
    expect(copy.versions.size).toBe(2001);
    expect(copy.latestVersion).toBe(2001);
    expect(baseVersions.size).toBe(2000);
    expect(state.table(['a', 't'])!.latestVersion).toBe(2000);
  });

  it('does not hand the base table’s versions to a table renamed in the draft', () => {
    const state = stateOf(ns('a'), declared(['a', 't']), version(['a', 't'], 1));
    const draft = new DraftCatalog(state);
    evolve(draft, { event: { type: 'TableRenamed', data: { table: ['a', 't'], tableUuid: 'u-a-t', newTable: ['a', 'r'] } }, metadata: meta(), revision: -1 });
    evolve(draft, { event: version(['a', 'r'], 2, 'u-a-t'), metadata: meta(), revision: -1 });
    expect(draft.table(['a', 'r'])!.versions.keys()).toEqual([1, 2]);
    expect(state.table(['a', 't'])!.versions.keys()).toEqual([1]);
    expect(state.table(['a', 'r'])).toBeUndefined();
  });
});

describe('UuidSlots', () => {
  it('numbers canonical UUIDs, finds them again after growing, and prints them back', () => {
    const slots = new UuidSlots();
    const ids = Array.from({ length: 5000 }, () => randomUUID());
    ids.forEach((id, i) => expect(slots.add(id)).toBe(i));
    expect(slots.add(ids[42])).toBe(42);
    ids.forEach((id, i) => {
      expect(slots.find(id)).toBe(i);
      expect(slots.uuidAt(i)).toBe(id);
    });
    expect(slots.find(randomUUID())).toBe(-1);
    expect(slots.size).toBe(5000);
    const copy = new UuidSlots();
    copy.importWords(slots.exportWords());
    expect(copy.find(ids[4999])).toBe(4999);
  });

  it('refuses what would not print back the same', () => {
    const slots = new UuidSlots();
    for (const id of [randomUUID().toUpperCase(), 'tx-1', '', `${randomUUID()}x`, randomUUID().replace(/-/g, '_')]) {
      expect(slots.add(id)).toBe(-1);
      expect(slots.find(id)).toBe(-1);
    }
    expect(slots.size).toBe(0);
  });
});

describe('TransactionTable', () => {
  const standard = (id: string, startedAt = '2026-03-01T10:00:00.123Z', status: TransactionState['status'] = 'Succeeded'): TransactionState => ({
    id,
    status,
    operation: 'CreateTableVersion',
    properties: { operation: 'CreateTableVersion', started_at: startedAt },
  });

  it('gives back every transaction exactly as it was put, field order included', () => {
    const table = new TransactionTable();
    const txs = [
      standard(randomUUID()),
      standard('tx-not-a-uuid'),
      standard(randomUUID(), '2026-01-01T00:00:00Z'),
      standard(randomUUID(), 'yesterday', 'Queued'),
      { id: randomUUID(), status: 'Running' as const, operation: 'CreateTableIndex', properties: { operation: 'CreateTableIndex', started_at: 'x', index_name: 'i' } },
      { id: randomUUID(), status: 'Succeeded' as const, operation: 'A', properties: { started_at: 'x', operation: 'A' } },
      { id: 'other', status: 'Failed' as const, operation: 'A', properties: { operation: 'B', started_at: 'x' } },
    ];
    for (const tx of txs) table.put(tx);
    for (const tx of txs) {
      expect(table.has(tx.id)).toBe(true);
      expect(JSON.stringify(table.get(tx.id))).toBe(JSON.stringify(tx));
    }
    expect(table.size).toBe(txs.length);
    expect([...table.ids()].sort()).toEqual(txs.map((t) => t.id).sort());
    expect(JSON.stringify([...table.values()].sort((a, b) => (a.id < b.id ? -1 : 1)))).toBe(
      JSON.stringify([...txs].sort((a, b) => (a.id < b.id ? -1 : 1))),
    );
    expect(table.has(randomUUID())).toBe(false);
    expect(table.get('missing')).toBeUndefined();
  });

  it('keeps the changes made to a transaction taken for update', () => {
    const table = new TransactionTable();
    const id = randomUUID();
    table.put(standard(id, '2026-01-01T00:00:00Z'));
    const tx = table.forUpdate(id)!;
    tx.status = 'Canceled';
    tx.properties.reason = 'stop';
    expect(table.get(id)).toEqual({ id, status: 'Canceled', operation: 'CreateTableVersion', properties: { operation: 'CreateTableVersion', started_at: '2026-01-01T00:00:00Z', reason: 'stop' } });
    expect(table.forUpdate(id)).toBe(tx);
    expect(table.forUpdate('missing')).toBeUndefined();
  });

  it('a state folded from the log answers the same as the events recorded it', () => {
    const state = new CatalogState();
    const ids = Array.from({ length: 3000 }, (_, i) => (i % 10 ? randomUUID() : `t${i}`));
    ids.forEach((transactionId, i) => {
      state.revision++;
      evolve(state, { event: ns(`n${i}`), metadata: { transactionId, operation: 'CreateNamespace', occurredAt: new Date(1_700_000_000_000 + i).toISOString() }, revision: state.revision });
    });
    expect(state.transactionCount).toBe(3000);
    expect(state.transaction(ids[2999])).toEqual({
      id: ids[2999],
      status: 'Succeeded',
      operation: 'CreateNamespace',
      properties: { operation: 'CreateNamespace', started_at: new Date(1_700_000_002_999).toISOString() },
    });
    expect(state.hasTransaction(ids[10])).toBe(true);
  });
});

describe('isoMillis', () => {
  it('reads exactly what toISOString prints, and nothing that would print back differently', () => {
    for (const ms of [0, 1, 951_782_400_000, 1_700_000_000_123, 4_102_444_799_999, -30_000_000_000_000, Date.UTC(2024, 1, 29, 23, 59, 59, 999)]) {
      const s = new Date(ms).toISOString();
      expect(isoMillis(s)).toBe(ms);
    }
    for (const s of [
      '2026-01-01T00:00:00Z',
      '2026-01-01T00:00:00.000+00:00',
      '2026-02-29T00:00:00.000Z',
      '2100-02-29T00:00:00.000Z',
      '2026-13-01T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-01-01T00:60:00.000Z',
      '2026-01-01T00:00:60.000Z',
      '0050-01-01T00:00:00.000Z',
      '2026-01-01 00:00:00.000Z',
      '2026-0a-01T00:00:00.000Z',
      'yesterday',
    ]) {
      expect(isoMillis(s)).toBeUndefined();
    }
  });
});
