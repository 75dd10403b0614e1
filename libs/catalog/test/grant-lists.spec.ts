import { CallerAccess, CatalogState, CatalogView, GrantFact, granteeKeysOf, listAllTables, listNamespaces, listTables } from '../src';
import { declared, fold, ns } from './support';

const BIG = 20_000;
const name = (i: number) => `t${String(i).padStart(5, '0')}`;

/**
 * A database whose namespace `big` holds 20,000 tables (and `wide` 2,000 namespaces), and a
 * caller of level none with read on one table of `big`, on one namespace of `wide`, and write on
 * `small`: what it may list is found from its grants, without walking what it may not read.
 */
function database(): CatalogState {
  const state = new CatalogState();
  fold(state, [ns('big'), ns('small'), ns('wide'), declared(['small', 'a']), declared(['small', 'b']), declared(['top'])]);
  const events = [];
  for (let i = 0; i < BIG; i++) events.push(declared(['big', name(i)]));
  for (let i = 0; i < 2_000; i++) events.push(ns('wide', name(i)));
  events.push(declared(['wide', name(7), 'w']));
  fold(state, events);
  const grants: GrantFact[] = [
    { grantee: { principal: 'ana' }, securable: { table: ['big', name(42)] }, level: 'read' },
    { grantee: { principal: 'ana' }, securable: { table: ['big', 'never-made'] }, level: 'read' },
    { grantee: { principal: 'ana' }, securable: { namespace: ['wide', name(7)] }, level: 'read' },
    { grantee: { role: 'ml' }, securable: { namespace: ['small'] }, level: 'write' },
    { grantee: { role: 'ml' }, securable: { table: ['small', 'a'] }, level: 'read' },
  ];
  fold(state, grants.map((data) => ({ type: 'GrantIssued', data })));
  return state;
}

/** The state, but walking the big namespace's tables, the wide one's namespaces, or every table throws. */
function guarded(state: CatalogState): CatalogState {
  return new Proxy(state, {
    get(target, property) {
      if (property === 'allTables') return () => { throw new Error('walked every table'); };
      const value = Reflect.get(target, property, target);
      if (property === 'childTables') return (id: string[]) => { if (id.join('.') === 'big') throw new Error('walked big'); return value.call(target, id); };
      if (property === 'childNamespaces') return (id: string[]) => { if (id.join('.') === 'wide') throw new Error('walked wide'); return value.call(target, id); };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('lists for a caller whose grants decide', () => {
  const state = database();
  const view = guarded(state);
  const ana = new CallerAccess(view as CatalogView, 'ana', granteeKeysOf('ana', ['ml']), 0);

  it('lists every table it may read, in order and paged, from its grants alone', () => {
    const all = listAllTables(view, {}, true, '$', ana);
    expect(all.items).toEqual([`big$${name(42)}`, 'small$a', 'small$b', `wide$${name(7)}$w`]);
    const first = listAllTables(view, { limit: 2 }, true, '$', ana);
    expect(first).toEqual({ items: [`big$${name(42)}`, 'small$a'], pageToken: 'small$a' });
    expect(listAllTables(view, { pageToken: 'small$a' }, true, '$', ana).items).toEqual(['small$b', `wide$${name(7)}$w`]);
  });

  it("lists a namespace's tables and namespaces it only passes through from its grants alone", () => {
    expect(listTables(view, ['big'], {}, true, ana)).toEqual({ items: [name(42)], pageToken: null });
    expect(listNamespaces(view, ['wide'], {}, ana)).toEqual({ items: [name(7)], pageToken: null });
    expect(listNamespaces(view, [], {}, ana).items).toEqual(['big', 'small', 'wide']);
    expect(listNamespaces(view, [], { pageToken: 'big', limit: 1 }, ana)).toEqual({ items: ['small'], pageToken: 'small' });
  });

  it('answers what an unguarded walk answers', () => {
    const walked = new CallerAccess(state, 'ana', granteeKeysOf('ana', ['ml']), 0);
    const readable = [...state.allTables()].filter((t) => walked.readsTable(t.id)).map((t) => t.id.join('$'));
    expect(listAllTables(view, {}, true, '$', ana).items).toEqual(readable.sort());
    expect(listAllTables(view, {}, false, '$', ana).items).toEqual([]);
  });
});

describe("a caller's grants among 10,000", () => {
  const state = new CatalogState();
  const grants: GrantFact[] = [];
  for (let i = 0; i < 9_000; i++) grants.push({ grantee: { principal: `p${i}` }, securable: { table: [`n${i % 100}`, `t${i}`] }, level: 'read' });
  for (let i = 0; i < 1_000; i++) grants.push({ grantee: { role: `r${i}` }, securable: { namespace: [`n${i % 100}`] }, level: 'write' });
  grants.push({ grantee: { principal: 'p7' }, securable: { namespace: ['n3'] }, level: 'admin' });
  fold(state, grants.map((data) => ({ type: 'GrantIssued', data })));
  const keys = granteeKeysOf('p7', []);
  const p7 = new CallerAccess(state, 'p7', keys, 0);

  it('lists its own and those on what it administers, as a walk of every grant would, without making every grant', () => {
    const expected = state.grants.all().filter((g) => keys.includes(granteeKeyOf(g)) || p7.rankOn(g.securable) === 3);
    const grantsOnly = Object.assign(Object.create(state.grants), { all: () => { throw new Error('made every grant'); } });
    const listed = grantsOnly.selected(keys, p7.administers());
    expect(listed).toEqual(expected);
    // n3's namespace grants and the 90 table grants in it, p7's own table grant (in n7) and its admin on n3.
    expect(listed).toHaveLength(10 + 90 + 1 + 1);
  });

  it('folds a past level from the changes of the grantees and securables asked about alone', () => {
    const past = state.grants.asOf(Date.parse('2026-01-01T00:00:00.000Z'), (g, s) => keys.includes(g) && (s === 'n:n3' || s === 'd'));
    expect(past.size).toBe(1);
    expect(past.rank(keys, ['d', 'n:n3'])).toBe(3);
  });
});

function granteeKeyOf(g: GrantFact): string {
  return 'principal' in g.grantee ? `p:${g.grantee.principal}` : `r:${g.grantee.role}`;
}
