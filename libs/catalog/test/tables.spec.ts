import {
  ErrorCode,
  decideDeclareTable,
  decideDeregisterTable,
  decideDropTable,
  decideRegisterTable,
  decideRenameTable,
  isOnlyDeclared,
  listAllTables,
  listTables,
} from '../src';
import { declared, expectCode, fold, given, ns, version } from './support';

const declare = (id: string[], location = `/wh/${id.join('/')}.lance`) => ({
  id,
  tableUuid: `uuid-${id.join('-')}`,
  location,
  properties: { p: '1' },
  managedVersioning: true,
});

describe('tables', () => {
  it('declares a table in an existing namespace', () => {
    const state = given(ns('a'));
    const events = decideDeclareTable(state, declare(['a', 't']));
    expect(events[0].type).toBe('TableDeclared');
    fold(state, events);
    const t = state.table(['a', 't'])!;
    expect(t).toMatchObject({ location: '/wh/a/t.lance', managedVersioning: true, origin: 'declared' });
    expect(isOnlyDeclared(t)).toBe(true);
    expect(state.tableAtLocation('/wh/a/t.lance')).toBe(t);
  });

  it('refuses a missing namespace, an existing table, a namespace of that name and a taken location', () => {
    expectCode(() => decideDeclareTable(given(), declare(['a', 't'])), ErrorCode.NamespaceNotFound);
    const state = given(ns('a'), ns('a', 'sub'), declared(['a', 't']));
    expectCode(() => decideDeclareTable(state, declare(['a', 't'])), ErrorCode.TableAlreadyExists);
    expectCode(() => decideDeclareTable(state, declare(['a', 'sub'])), ErrorCode.TableAlreadyExists);
    expectCode(() => decideDeclareTable(state, declare(['a', 'u'], state.table(['a', 't'])!.location)), ErrorCode.InvalidInput);
    expectCode(() => decideDeclareTable(state, declare([])), ErrorCode.InvalidInput);
  });

  it('drops and deregisters, freeing the name', () => {
    const state = given(ns('a'), declared(['a', 't']), declared(['a', 'u']));
    fold(state, decideDropTable(state, ['a', 't']));
    fold(state, decideDeregisterTable(state, ['a', 'u']));
    expect(state.childTables(['a']).size).toBe(0);
    expect(state.tableAtLocation('/wh/default/a/t-u-a-t.lance')).toBeUndefined();
    expectCode(() => decideDropTable(state, ['a', 't']), ErrorCode.TableNotFound);
    expectCode(() => decideDropTable(state, ['b', 't']), ErrorCode.NamespaceNotFound);
    expect(decideDeclareTable(state, declare(['a', 't']))).toHaveLength(1);
  });

  it('registers with imported versions, and overwrites a registration on request', () => {
    const state = given(ns('a'), declared(['a', 't']));
    const versions = [1, 2].map((v) => ({ version: v, manifestPath: `x/${v}`, namingScheme: 'V2' as const, timestampMillis: v }));
    expectCode(
      () => decideRegisterTable(state, { ...declare(['a', 't'], '/wh/r.lance'), mode: 'Create', versions }),
      ErrorCode.TableAlreadyExists,
    );
    const events = decideRegisterTable(state, { ...declare(['a', 't'], '/wh/r.lance'), mode: 'Overwrite', versions });
    expect(events.map((e) => e.type)).toEqual(['TableDeregistered', 'TableRegistered']);
    fold(state, events);
    const t = state.table(['a', 't'])!;
    expect(t.origin).toBe('registered');
    expect(t.latestVersion).toBe(2);
    expect(state.tableAtLocation('/wh/default/a/t-u-a-t.lance')).toBeUndefined();
  });

  it('renames within and across namespaces, keeping the location', () => {
    const state = given(ns('a'), ns('b'), declared(['a', 't']), version(['a', 't'], 1));
    const location = state.table(['a', 't'])!.location;
    fold(state, decideRenameTable(state, { id: ['a', 't'], newTableName: 'u' }));
    expect(state.table(['a', 'u'])!.location).toBe(location);
    expect(state.table(['a', 't'])).toBeUndefined();
    fold(state, decideRenameTable(state, { id: ['a', 'u'], newTableName: 'v', newNamespace: ['b'] }));
    expect(state.table(['b', 'v'])!.versions.size).toBe(1);
    expect(state.tableAtLocation(location)!.id).toEqual(['b', 'v']);
    expect(state.childTables(['a']).size).toBe(0);
    fold(state, [declared(['b', 'w'])]);
    expectCode(() => decideRenameTable(state, { id: ['b', 'v'], newTableName: 'w' }), ErrorCode.TableAlreadyExists);
    expectCode(() => decideRenameTable(state, { id: ['b', 'v'], newTableName: 'x', newNamespace: ['c'] }), ErrorCode.NamespaceNotFound);
    expectCode(() => decideRenameTable(state, { id: ['b', 'zz'], newTableName: 'x' }), ErrorCode.TableNotFound);
  });

  it('lists tables directly in a namespace, with or without declared-only ones', () => {
    const state = given(ns('a'), declared(['a', 'b']), declared(['a', 'a']), version(['a', 'a'], 1), ns('a', 'sub'), declared(['a', 'sub', 'c']));
    expect(listTables(state, ['a'], {}, true)).toEqual({ items: ['a', 'b'], pageToken: null });
    expect(listTables(state, ['a'], {}, false)).toEqual({ items: ['a'], pageToken: null });
    expect(listTables(state, ['a'], { limit: 1 }, true)).toEqual({ items: ['a'], pageToken: 'a' });
  });

  it('lists every table recursively by full id, in order, with the delimiter asked for', () => {
    const state = given(ns('a'), declared(['a', 'b']), declared(['z']), ns('a', 'sub'), declared(['a', 'sub', 'c']), version(['z'], 1));
    expect(listAllTables(state, {}, true, '$').items).toEqual(['a$b', 'a$sub$c', 'z']);
    expect(listAllTables(state, {}, false, '.').items).toEqual(['z']);
    expect(listAllTables(state, { pageToken: 'a$b', limit: 1 }, true, '$')).toEqual({ items: ['a$sub$c'], pageToken: 'a$sub$c' });
  });

  it('treats an unmanaged table as never declared-only in the catalog', () => {
    const state = given(ns('a'), declared(['a', 'u'], 'uu', false));
    expect(isOnlyDeclared(state.table(['a', 'u'])!)).toBe(false);
  });
});
