import {
  BatchOperation,
  CatalogEvent,
  CatalogState,
  DraftCatalog,
  ErrorCode,
  NestedLocations,
  couldBeNamespaceFolder,
  decideBatch,
  decideDeclareTable,
  decideDeregisterTable,
  decideDropTable,
  decideRecordTablePurged,
  decideRegisterTable,
  defaultTableLocation,
  evolve,
  liveTablesAtPurge,
} from '../src';
import { expectCode, fold, stateOf, meta, ns } from './support';

const ROOT = '/wh/default';
const declare = (id: string[], location: string) => ({ id, tableUuid: `u-${id.join('-')}`, location, properties: {}, managedVersioning: true });
const declaredAt = (id: string[], location: string): CatalogEvent => ({
  type: 'TableDeclared',
  data: { table: id, tableUuid: `u-${id.join('-')}`, location, properties: {}, managedVersioning: true },
});
const register = (id: string[], location: string, mode: 'Create' | 'Overwrite' = 'Create') => ({ ...declare(id, location), mode, versions: [] });
const refused = (work: () => unknown, message: RegExp) => expectCode(work, ErrorCode.InvalidInput, message);

describe('nested locations', () => {
  it('compares whole segments, for paths and s3:// URIs alike', () => {
    const index = new NestedLocations<string>();
    index.add('/a/b.lance', 'b');
    index.add('s3://bucket/db/t.lance/', 't');
    expect(index.at('/a/b.lance')).toBe('b');
    expect(index.at('/a//b.lance/')).toBe('b');
    expect(index.enclosing('/a/b.lance2')).toEqual([]);
    expect(index.enclosing('/a/b.lance/data/x.lance')).toEqual(['b']);
    expect(index.hasInside('/a/b')).toBe(false);
    expect(index.hasInside('/a')).toBe(true);
    expect(index.inside('/a')).toEqual(['b']);
    expect(index.at('s3://bucket/db/t.lance')).toBe('t');
    expect(index.enclosing('s3://bucket/db/t.lance/x')).toEqual(['t']);
    expect(index.hasInside('s3://bucket/db')).toBe(true);
    expect(index.hasInside('s3://bucket')).toBe(true);
    expect(index.hasInside('s3://bucket/d')).toBe(false);
    expect(index.enclosing('s3://bucket/db/t.lance2')).toEqual([]);
    index.add('/a/b.lance2', 'b2');
    index.add('/a/b.lance/in.lance', 'in');
    expect(index.inside('/a/b.lance')).toEqual(['in']);
    expect(index.inside('/a').sort()).toEqual(['b', 'b2', 'in']);
  });

  it('keeps a folder held while anything is left in it, however the entries nest', () => {
    const index = new NestedLocations<string>();
    for (const l of ['/w/db/ns/a.lance', '/w/db/ns/b.lance', '/w/db/ns/a.lance/in.lance', '/w/db/other/c.lance']) index.add(l, l);
    index.remove('/w/db/ns/a.lance', '/w/db/ns/a.lance');
    expect(index.hasInside('/w/db/ns/a.lance')).toBe(true);
    index.remove('/w/db/ns/a.lance/in.lance', '/w/db/ns/a.lance/in.lance');
    expect(index.hasInside('/w/db/ns/a.lance')).toBe(false);
    expect(index.hasInside('/w/db/ns')).toBe(true);
    index.remove('/w/db/ns/b.lance', 'not what is there');
    expect(index.at('/w/db/ns/b.lance')).toBe('/w/db/ns/b.lance');
    index.remove('/w/db/ns/b.lance', '/w/db/ns/b.lance');
    expect(index.hasInside('/w/db/ns')).toBe(false);
    expect(index.hasInside('/w/db')).toBe(true);
    index.remove('/w/db/other/c.lance', '/w/db/other/c.lance');
    expect(index.hasInside('/w')).toBe(false);
  });

  it('tells the folders the namespace tree places tables in from a table of its own', () => {
    for (const l of [ROOT, `${ROOT}/alpha`, `${ROOT}/alpha/sales`, `${ROOT}/alpha/sales/`, 's3://b/p/default/ns', `${ROOT}/x.lance/sub`]) {
      expect({ l, folder: couldBeNamespaceFolder(l) }).toEqual({ l, folder: true });
    }
    for (const l of [defaultTableLocation(ROOT, ['alpha', 'sales', 't'], '0123456789ab-cdef'), `${ROOT}/alpha/t.lance`, `${ROOT}/my table`, `${ROOT}/${'x'.repeat(65)}`]) {
      expect({ l, folder: couldBeNamespaceFolder(l) }).toEqual({ l, folder: false });
    }
  });
});

describe('a table location is a folder of its own', () => {
  const victim = `${ROOT}/alpha/sales/orders-0123.lance`;
  const live = () => stateOf(ns('alpha'), ns('alpha', 'sales'), declaredAt(['alpha', 'sales', 'orders'], victim));

  it("refuses a namespace's folder, another table's location, a folder inside it and one around it", () => {
    const state = live();
    const attempts: [string, RegExp][] = [
      [`${ROOT}/alpha/sales`, /folder where namespaces keep their tables/],
      [`${ROOT}/alpha`, /folder where namespaces keep their tables/],
      [`${ROOT}/gamma`, /folder where namespaces keep their tables/],
      [victim, /^location '[^']+' already belongs to another table$/],
      [`${victim}/`, /already belongs to another table/],
      [`${victim}/data/sub.lance`, /lies inside another table's location/],
    ];
    for (const [location, message] of attempts) {
      refused(() => decideDeclareTable(state, declare(['alpha', 'x'], location)), message);
      refused(() => decideRegisterTable(state, register(['alpha', 'x'], location)), message);
    }
    // Around it: a folder holding the table (a name no namespace folder has).
    const around = stateOf(ns('alpha'), declaredAt(['alpha', 'inner'], `${ROOT}/alpha/box.lance/inner.lance`));
    refused(() => decideDeclareTable(around, declare(['alpha', 'x'], `${ROOT}/alpha/box.lance`)), /holds another table's location/);
    refused(() => decideRegisterTable(around, register(['alpha', 'x'], `${ROOT}/alpha/box.lance`)), /holds another table's location/);
    // Only the input is named: nothing of what lies there beyond the relation.
    const error = (() => {
      try {
        decideDeclareTable(state, declare(['alpha', 'x'], `${victim}/data/sub.lance`));
      } catch (e) {
        return e as Error & { detail?: string };
      }
    })();
    expect(`${error?.message} ${error?.detail}`.replace(`${victim}/data/sub.lance`, '')).not.toMatch(/orders|sales/);
  });

  it('accepts a sibling whose name only starts like the table, and s3:// locations alike', () => {
    const state = live();
    expect(decideDeclareTable(state, declare(['alpha', 'x'], `${victim}2`))).toHaveLength(1);
    const s3 = stateOf(ns('a'), declaredAt(['a', 't'], 's3://bucket/wh/default/a/t.lance'));
    refused(() => decideDeclareTable(s3, declare(['a', 'x'], 's3://bucket/wh/default/a/t.lance/data/x.lance')), /inside another table/);
    refused(() => decideDeclareTable(s3, declare(['a', 'x'], 's3://bucket/wh/default/a')), /namespaces keep their tables/);
    expect(decideDeclareTable(s3, declare(['a', 'x'], 's3://bucket/wh/default/a/t.lance2'))).toHaveLength(1);
  });

  it('refuses locations at, inside or around a dropped table awaiting its purge, and registering its own location takes it back', () => {
    const state = live();
    fold(state, decideDropTable(state, ['alpha', 'sales', 'orders'], { purgeAfterMillis: 1000 }));
    refused(() => decideDeclareTable(state, declare(['alpha', 'x'], victim)), /still to be purged/);
    refused(() => decideDeclareTable(state, declare(['alpha', 'x'], `${victim}/data/x.lance`)), /lies inside the location of a dropped table/);
    refused(() => decideRegisterTable(state, register(['alpha', 'x'], `${victim}/data/x.lance`)), /lies inside the location of a dropped table/);
    expect(decideDeclareTable(state, declare(['alpha', 'x'], `${ROOT}/alpha/sales.d`))).toHaveLength(1);
    const holding = stateOf(ns('a'), declaredAt(['a', 'in'], `${ROOT}/a/box.lance/in.lance`));
    fold(holding, decideDropTable(holding, ['a', 'in'], { purgeAfterMillis: 1000 }));
    refused(() => decideDeclareTable(holding, declare(['a', 'x'], `${ROOT}/a/box.lance`)), /holds the location of a dropped table/);
    expect(decideRegisterTable(state, register(['alpha', 'sales', 'orders'], victim)).map((e) => e.type)).toEqual(['TablePurgeCanceled', 'TableRegistered']);
    // Once purged, the folder is free again.
    fold(state, decideRecordTablePurged(state, { tableUuid: 'u-alpha-sales-orders', files: 3 }));
    expect(decideDeclareTable(state, declare(['alpha', 'x'], `${victim}/data/x.lance`))).toHaveLength(1);
  });

  it('defuses the time bomb: a table declared at a folder, then dropped, keeps the folder closed until its purge', () => {
    const state = stateOf(ns('a'));
    const folder = `${ROOT}/a/box.lance`;
    fold(state, decideDeclareTable(state, declare(['a', 'bomb'], folder)));
    fold(state, decideDropTable(state, ['a', 'bomb'], { purgeAfterMillis: 25_000 }));
    refused(() => decideDeclareTable(state, declare(['a', 'victim'], `${folder}/victim.lance`)), /lies inside the location of a dropped table/);
  });

  it('lets a table registered over itself move inside or around its old location (its files are kept, not purged)', () => {
    const state = stateOf(ns('a'), declaredAt(['a', 't'], `${ROOT}/a/t.lance`));
    expect(decideRegisterTable(state, register(['a', 't'], `${ROOT}/a/t.lance/v2.lance`, 'Overwrite')).map((e) => e.type)).toEqual(['TableDeregistered', 'TableRegistered']);
    const inner = stateOf(ns('a'), declaredAt(['a', 't'], `${ROOT}/a/box.lance/t.lance`));
    expect(decideRegisterTable(inner, register(['a', 't'], `${ROOT}/a/box.lance`, 'Overwrite'))).toHaveLength(2);
    refused(() => decideRegisterTable(inner, register(['a', 'u'], `${ROOT}/a/box.lance`, 'Overwrite')), /holds another table's location/);
  });

  it('decides against a batch draft: declarations before it in the batch count, a table it removed does not', () => {
    const state = stateOf(ns('a'), declaredAt(['a', 't'], `${ROOT}/a/t.lance`), declaredAt(['a', 'u'], `${ROOT}/a/box.lance/u.lance`));
    const declareOp = (name: string, location: string): BatchOperation => ({ kind: 'declare_table', command: declare(['a', name], location) });
    expectCode(
      () => decideBatch(state, [declareOp('n1', `${ROOT}/a/new.lance`), declareOp('n2', `${ROOT}/a/new.lance/in.lance`)], meta()),
      ErrorCode.InvalidInput,
      /operation 2 \(declare_table\).*lies inside another table's location/,
    );
    expectCode(() => decideBatch(state, [declareOp('n1', `${ROOT}/a/outer.lance/in.lance`), declareOp('n2', `${ROOT}/a/outer.lance`)], meta()), ErrorCode.InvalidInput, /holds another/);
    // Deregistered in the same batch: its files stay, so its folder is free.
    const freed = decideBatch(state, [{ kind: 'deregister_table', id: ['a', 'u'] }, declareOp('n', `${ROOT}/a/box.lance`)], meta());
    expect(freed.events.map((e) => e.type)).toEqual(['TableDeregistered', 'TableDeclared']);
    // A draft over a draft (a batch inside a group of commits) sees both layers.
    const group = new DraftCatalog(state);
    for (const event of decideDropTable(group, ['a', 't'], { purgeAfterMillis: 1 })) evolve(group, { event, metadata: meta(), revision: -1 });
    expectCode(() => decideBatch(group, [declareOp('n', `${ROOT}/a/t.lance/x.lance`)], meta()), ErrorCode.InvalidInput, /dropped table/);
    expect(decideBatch(group, [declareOp('n', `${ROOT}/a/t2.lance`)], meta()).events).toHaveLength(1);
    const removedInGroup = new DraftCatalog(state);
    for (const event of decideDeregisterTable(removedInGroup, ['a', 'u'])) evolve(removedInGroup, { event, metadata: meta(), revision: -1 });
    expect(decideBatch(removedInGroup, [declareOp('n', `${ROOT}/a/box.lance`)], meta()).events).toHaveLength(1);
    expectCode(() => decideBatch(new DraftCatalog(state), [declareOp('n', `${ROOT}/a/box.lance`)], meta()), ErrorCode.InvalidInput, /holds another/);
  });

  it('names the live tables a purge must leave alone, from a log written before such locations were refused', () => {
    const state = stateOf(
      ns('a'),
      declaredAt(['a', 'outer'], `${ROOT}/a/outer.lance`),
      declaredAt(['a', 'nested'], `${ROOT}/a/outer.lance/data/nested.lance`),
      declaredAt(['a', 'inner'], `${ROOT}/a/box.lance/inner.lance`),
      declaredAt(['a', 'box'], `${ROOT}/a/box.lance`),
      declaredAt(['a', 'sibling'], `${ROOT}/a/box.lance2`),
      declaredAt(['a', 'alone'], `${ROOT}/a/alone.lance`),
    );
    for (const id of [['a', 'nested'], ['a', 'box'], ['a', 'alone']]) fold(state, decideDropTable(state, id, { purgeAfterMillis: 1 }));
    expect(liveTablesAtPurge(state, `${ROOT}/a/outer.lance/data/nested.lance`)).toEqual([{ table: ['a', 'outer'], location: `${ROOT}/a/outer.lance` }]);
    expect(liveTablesAtPurge(state, `${ROOT}/a/box.lance`)).toEqual([{ table: ['a', 'inner'], location: `${ROOT}/a/box.lance/inner.lance` }]);
    expect(liveTablesAtPurge(state, `${ROOT}/a/alone.lance`)).toEqual([]);
    const skipped = liveTablesAtPurge(state, `${ROOT}/a/box.lance`);
    const events = decideRecordTablePurged(state, { tableUuid: 'u-a-box', files: 0, skipped });
    expect(events[0].data).toMatchObject({ files: 0, skipped });
    expect(decideRecordTablePurged(state, { tableUuid: 'u-a-alone', files: 2, skipped: [] })[0].data).not.toHaveProperty('skipped');
  });

  it('rebuilds the index from a state image', () => {
    const state = live();
    const restored = CatalogState.fromImage(state.toImage());
    refused(() => decideDeclareTable(restored, declare(['alpha', 'x'], `${victim}/data/sub.lance`)), /inside another table/);
  });
});
