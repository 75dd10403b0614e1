import { CallerAccess, CatalogEvent, CatalogState, DraftCatalog, ErrorCode, GrantFact, decideGrant, evolve, granteeKeysOf, validateGrant } from '../src';
import { declared, expectCode, fold, meta, ns } from './support';

const issued = (data: GrantFact): CatalogEvent => ({ type: 'GrantIssued', data });
const revoked = (data: GrantFact): CatalogEvent => ({ type: 'GrantRevoked', data });
const at = (occurredAt: string) => ({ ...meta('CreateGrant'), occurredAt, principal: 'root' });
const ML_WRITE: GrantFact = { grantee: { role: 'ml' }, securable: { namespace: ['features'] }, level: 'write' };

function catalog(): CatalogState {
  const state = new CatalogState();
  fold(state, [ns('features'), ns('features', 'v1'), ns('finance'), declared(['features', 'f1']), declared(['features', 'v1', 'emb']), declared(['finance', 'ledger'])]);
  fold(state, [issued(ML_WRITE)], at('2026-01-01T10:00:00.000Z'));
  fold(state, [issued({ grantee: { principal: 'ana' }, securable: { table: ['finance', 'ledger'] }, level: 'read' })], at('2026-01-01T11:00:00.000Z'));
  return state;
}

describe('grants', () => {
  it('gives the highest level of the grants on the object and above it, to the principal and its roles', () => {
    const state = catalog();
    const ana = new CallerAccess(state, 'ana', granteeKeysOf('ana', ['ml']), 0);
    expect(ana.levelOn({ table: ['features', 'v1', 'emb'] })).toBe('write');
    expect(ana.levelOn({ namespace: ['features'] })).toBe('write');
    expect(ana.levelOn({ table: ['finance', 'ledger'] })).toBe('read');
    expect(ana.levelOn({ namespace: ['finance'] })).toBe('none');
    expect(ana.levelOn({ database: true })).toBe('none');
    // The credential's own level counts too.
    expect(new CallerAccess(state, 'x', granteeKeysOf('x', []), 1).levelOn({ table: ['finance', 'ledger'] })).toBe('read');
    expect(new CallerAccess(state, 'x', granteeKeysOf('x', ['ml']), 1).reasons({ table: ['features', 'f1'] })).toEqual([ML_WRITE]);
  });

  it('answers what it may not read as missing, what it sees but may not do as refused', () => {
    const state = catalog();
    const ana = new CallerAccess(state, 'ana', granteeKeysOf('ana', []), 0);
    // finance is above her grant: she sees it, so a table she may not read there is a missing table.
    expect(ana.seesNamespace(['finance'])).toBe(true);
    expectCode(() => ana.requireTable(['finance', 'other'], 1), ErrorCode.TableNotFound, /table 'finance\$other' does not exist/);
    expectCode(() => ana.requireTable(['features', 'f1'], 1), ErrorCode.NamespaceNotFound, /namespace 'features' does not exist/);
    expectCode(() => ana.requireTable(['finance', 'ledger'], 2), ErrorCode.PermissionDenied);
    expectCode(() => ana.requireNamespace(['finance'], 1), ErrorCode.PermissionDenied);
    expect(ana.requireNamespace(['finance'], 1, true)).toBe(1);
  });

  it('keeps every change, so a level is told as of any time', () => {
    const state = catalog();
    fold(state, [revoked(ML_WRITE)], at('2026-01-01T12:00:00.000Z'));
    const keys = granteeKeysOf('ana', ['ml']);
    const chain = ['d', 'n:features'];
    expect(state.grants.rank(keys, chain)).toBe(0);
    expect(state.grants.asOf(Date.parse('2026-01-01T11:59:59.000Z')).rank(keys, chain)).toBe(2);
    expect(state.grants.asOf(Date.parse('2026-01-01T09:00:00.000Z')).rank(keys, chain)).toBe(0);
    expect(state.grants.history().map((c) => [c.issued, c.by])).toEqual([
      [true, 'root'],
      [true, 'root'],
      [false, 'root'],
    ]);
    // A snapshot's image brings them back whole.
    const back = CatalogState.fromImage(state.toImage());
    expect(back.grants.history()).toEqual(state.grants.history());
    expect(back.grants.size).toBe(1);
  });

  it('decides nothing for what is held already, or not held, and refuses malformed grants', () => {
    const state = catalog();
    expect(decideGrant(state, ML_WRITE, true)).toEqual([]);
    expect(decideGrant(state, { ...ML_WRITE, level: 'admin' }, true)).toHaveLength(1);
    expect(decideGrant(state, { ...ML_WRITE, level: 'read' }, false)).toEqual([]);
    expect(decideGrant(state, ML_WRITE, false)).toEqual([revoked(ML_WRITE)]);
    expectCode(() => validateGrant({ grantee: { role: 'ml' }, securable: { namespace: [] }, level: 'read' }), ErrorCode.InvalidInput);
    expectCode(() => validateGrant({ grantee: { role: '' }, securable: { database: true }, level: 'read' }), ErrorCode.InvalidInput);
    expectCode(() => validateGrant({ grantee: { role: 'ml' }, securable: { database: true }, level: 'owner' as never }), ErrorCode.InvalidInput);
    for (const id of [['fx$t1'], ['fx', '..'], ['fx', 'a/b'], ['fx', 'tab\u0001']]) {
      expectCode(() => validateGrant({ grantee: { role: 'ml' }, securable: { namespace: id }, level: 'read' }), ErrorCode.InvalidInput);
      expectCode(() => validateGrant({ grantee: { role: 'ml' }, securable: { table: id }, level: 'read' }), ErrorCode.InvalidInput);
      // One recorded before names were checked can still be revoked.
      expect(validateGrant({ grantee: { role: 'ml' }, securable: { table: id }, level: 'read' }, false).securable).toEqual({ table: id });
    }
  });

  it('changes a draft without touching the state it was made from', () => {
    const state = catalog();
    const draft = new DraftCatalog(state);
    evolve(draft, { event: revoked(ML_WRITE), metadata: meta(), revision: -1 });
    expect(decideGrant(draft, ML_WRITE, false)).toEqual([]);
    expect(state.grants.holds(ML_WRITE)).toBe(true);
  });
});
