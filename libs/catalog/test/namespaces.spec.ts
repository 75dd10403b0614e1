import { ErrorCode, decideCreateNamespace, decideDropNamespace, listNamespaces } from '../src';
import { declared, expectCode, fold, given, ns } from './support';

describe('namespaces', () => {
  it('creates a namespace under an existing parent', () => {
    const state = given(ns('a'));
    const events = decideCreateNamespace(state, { id: ['a', 'b'], mode: 'Create', properties: { k: 'v' } });
    expect(events).toEqual([{ type: 'NamespaceCreated', data: { namespace: ['a', 'b'], properties: { k: 'v' } } }]);
    fold(state, events);
    expect(state.namespace(['a', 'b'])?.properties).toEqual({ k: 'v' });
    expect(state.childNamespaces(['a']).toArray()).toEqual(['b']);
  });

  it('refuses a missing parent and a duplicate', () => {
    expectCode(() => decideCreateNamespace(given(), { id: ['x', 'y'], mode: 'Create', properties: {} }), ErrorCode.NamespaceNotFound);
    expectCode(() => decideCreateNamespace(given(ns('a')), { id: ['a'], mode: 'Create', properties: {} }), ErrorCode.NamespaceAlreadyExists);
  });

  it('keeps an existing namespace with ExistOk and records nothing', () => {
    expect(decideCreateNamespace(given(ns('a')), { id: ['a'], mode: 'ExistOk', properties: { n: '1' } })).toEqual([]);
  });

  it('replaces a namespace and its contents with Overwrite', () => {
    const state = given(ns('a'), ns('a', 'b'), declared(['a', 't']));
    const events = decideCreateNamespace(state, { id: ['a'], mode: 'Overwrite', properties: { fresh: 'yes' } });
    expect(events.map((e) => e.type)).toEqual(['NamespaceDropped', 'TableDropped', 'NamespaceDropped', 'NamespaceCreated']);
    fold(state, events);
    expect(state.namespace(['a'])?.properties).toEqual({ fresh: 'yes' });
    expect(state.table(['a', 't'])).toBeUndefined();
    expect(state.namespace(['a', 'b'])).toBeUndefined();
  });

  it('treats the root specially', () => {
    expectCode(() => decideCreateNamespace(given(), { id: [], mode: 'Create', properties: {} }), ErrorCode.NamespaceAlreadyExists);
    expect(decideCreateNamespace(given(), { id: [], mode: 'ExistOk', properties: {} })).toEqual([]);
    expectCode(() => decideCreateNamespace(given(), { id: [], mode: 'Overwrite', properties: {} }), ErrorCode.InvalidInput);
    expectCode(() => decideDropNamespace(given(), { id: [], mode: 'Fail', behavior: 'Cascade' }), ErrorCode.InvalidInput);
  });

  it('drops with Restrict only when empty, and with Cascade deepest first', () => {
    const state = given(ns('a'), ns('a', 'b'), ns('a', 'b', 'c'), declared(['a', 'b', 't']), declared(['a', 'u']));
    expectCode(() => decideDropNamespace(state, { id: ['a'], mode: 'Fail', behavior: 'Restrict' }), ErrorCode.NamespaceNotEmpty, /1 namespace\(s\) and 1 table/);
    const events = decideDropNamespace(state, { id: ['a'], mode: 'Fail', behavior: 'Cascade' });
    expect(events.map((e) => [e.type, 'namespace' in e.data ? e.data.namespace : (e.data as unknown as { table: string[] }).table])).toEqual([
      ['NamespaceDropped', ['a', 'b', 'c']],
      ['TableDropped', ['a', 'b', 't']],
      ['NamespaceDropped', ['a', 'b']],
      ['TableDropped', ['a', 'u']],
      ['NamespaceDropped', ['a']],
    ]);
    fold(state, events);
    expect(state.namespaceCount).toBe(1);
    expect(state.tableCount).toBe(0);
    expect(state.childNamespaces([]).size).toBe(0);
  });

  it('fails or skips a missing namespace', () => {
    expectCode(() => decideDropNamespace(given(), { id: ['x'], mode: 'Fail', behavior: 'Restrict' }), ErrorCode.NamespaceNotFound);
    expect(decideDropNamespace(given(), { id: ['x'], mode: 'Skip', behavior: 'Restrict' })).toEqual([]);
  });

  it('lists children in order, paged', () => {
    const state = given(ns('b'), ns('a'), ns('c'), ns('a', 'z'));
    expect(listNamespaces(state, [], {})).toEqual({ items: ['a', 'b', 'c'], pageToken: null });
    expect(listNamespaces(state, [], { limit: 2 })).toEqual({ items: ['a', 'b'], pageToken: 'b' });
    expect(listNamespaces(state, [], { limit: 2, pageToken: 'b' })).toEqual({ items: ['c'], pageToken: null });
    expect(listNamespaces(state, [], { limit: 3 })).toEqual({ items: ['a', 'b', 'c'], pageToken: null });
    expectCode(() => listNamespaces(state, ['q'], {}), ErrorCode.NamespaceNotFound);
  });
});
