import { ErrorCode, decideCreateNamespace, decideDropNamespace, listNamespaces } from '../src';
import { given } from './decider';
import { declared, expectCode, ns, stateOf } from './support';

const create = (id: string[], mode: 'Create' | 'ExistOk' | 'Overwrite' = 'Create', properties: Record<string, string> = {}) => ({ id, mode, properties });
const drop = (id: string[], behavior: 'Restrict' | 'Cascade', mode: 'Fail' | 'Skip' = 'Fail') => ({ id, mode, behavior });

describe('CreateNamespace', () => {
  it('creates a namespace under an existing parent', () =>
    given(ns('a'))
      .when((view) => decideCreateNamespace(view, create(['a', 'b'], 'Create', { k: 'v' })))
      .then({ type: 'NamespaceCreated', data: { namespace: ['a', 'b'], properties: { k: 'v' } } }));

  it('lists the new namespace under its parent, with its properties', () =>
    given(ns('a'))
      .when((view) => decideCreateNamespace(view, create(['a', 'b'], 'Create', { k: 'v' })))
      .thenState((state) => {
        expect(state.namespace(['a', 'b'])?.properties).toEqual({ k: 'v' });
        expect(state.childNamespaces(['a']).toArray()).toEqual(['b']);
      }));

  it('refuses a missing parent', () => given().when((view) => decideCreateNamespace(view, create(['x', 'y']))).thenFails(ErrorCode.NamespaceNotFound));

  it('refuses a namespace that exists', () => given(ns('a')).when((view) => decideCreateNamespace(view, create(['a']))).thenFails(ErrorCode.NamespaceAlreadyExists));

  it('keeps an existing namespace with ExistOk and records nothing', () =>
    given(ns('a'))
      .when((view) => decideCreateNamespace(view, create(['a'], 'ExistOk', { n: '1' })))
      .then());

  it('replaces a namespace and its contents with Overwrite, contents first', () =>
    given(ns('a'), ns('a', 'b'), declared(['a', 't']))
      .when((view) => decideCreateNamespace(view, create(['a'], 'Overwrite', { fresh: 'yes' })))
      .thenMatch({ type: 'NamespaceDropped' }, { type: 'TableDropped' }, { type: 'NamespaceDropped' }, { type: 'NamespaceCreated' }));

  it('leaves only the fresh namespace after an Overwrite', () =>
    given(ns('a'), ns('a', 'b'), declared(['a', 't']))
      .when((view) => decideCreateNamespace(view, create(['a'], 'Overwrite', { fresh: 'yes' })))
      .thenState((state) => {
        expect(state.namespace(['a'])?.properties).toEqual({ fresh: 'yes' });
        expect(state.table(['a', 't'])).toBeUndefined();
        expect(state.namespace(['a', 'b'])).toBeUndefined();
      }));

  it('refuses to create the root, which always exists', () => given().when((view) => decideCreateNamespace(view, create([]))).thenFails(ErrorCode.NamespaceAlreadyExists));

  it('keeps the root with ExistOk', () => given().when((view) => decideCreateNamespace(view, create([], 'ExistOk'))).then());

  it('refuses to overwrite the root', () => given().when((view) => decideCreateNamespace(view, create([], 'Overwrite'))).thenFails(ErrorCode.InvalidInput));
});

describe('DropNamespace', () => {
  const tree = [ns('a'), ns('a', 'b'), ns('a', 'b', 'c'), declared(['a', 'b', 't']), declared(['a', 'u'])];

  it('refuses with Restrict while the namespace holds anything, saying what', () =>
    given(...tree)
      .when((view) => decideDropNamespace(view, drop(['a'], 'Restrict')))
      .thenFails(ErrorCode.NamespaceNotEmpty, /1 namespace\(s\) and 1 table/));

  it('drops with Cascade, deepest first', () =>
    given(...tree)
      .when((view) => decideDropNamespace(view, drop(['a'], 'Cascade')))
      .thenMatch(
        { type: 'NamespaceDropped', data: { namespace: ['a', 'b', 'c'] } },
        { type: 'TableDropped', data: { table: ['a', 'b', 't'] } },
        { type: 'NamespaceDropped', data: { namespace: ['a', 'b'] } },
        { type: 'TableDropped', data: { table: ['a', 'u'] } },
        { type: 'NamespaceDropped', data: { namespace: ['a'] } },
      ));

  it('leaves only the root after a Cascade', () =>
    given(...tree)
      .when((view) => decideDropNamespace(view, drop(['a'], 'Cascade')))
      .thenState((state) => expect([state.namespaceCount, state.tableCount, state.childNamespaces([]).size]).toEqual([1, 0, 0])));

  it('refuses to drop the root', () => given().when((view) => decideDropNamespace(view, drop([], 'Cascade'))).thenFails(ErrorCode.InvalidInput));

  it('fails on a missing namespace', () => given().when((view) => decideDropNamespace(view, drop(['x'], 'Restrict'))).thenFails(ErrorCode.NamespaceNotFound));

  it('skips a missing namespace with Skip', () => given().when((view) => decideDropNamespace(view, drop(['x'], 'Restrict', 'Skip'))).then());
});

describe('ListNamespaces', () => {
  const state = stateOf(ns('b'), ns('a'), ns('c'), ns('a', 'z'));

  it('lists the children in order', () => expect(listNamespaces(state, [], {})).toEqual({ items: ['a', 'b', 'c'], pageToken: null }));

  it('pages them, a token only while more remain', () => {
    expect(listNamespaces(state, [], { limit: 2 })).toEqual({ items: ['a', 'b'], pageToken: 'b' });
    expect(listNamespaces(state, [], { limit: 2, pageToken: 'b' })).toEqual({ items: ['c'], pageToken: null });
    expect(listNamespaces(state, [], { limit: 3 })).toEqual({ items: ['a', 'b', 'c'], pageToken: null });
  });

  it('refuses a missing namespace', () => expectCode(() => listNamespaces(state, ['q'], {}), ErrorCode.NamespaceNotFound));
});
