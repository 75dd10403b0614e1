import { ANONYMOUS, ApiKeyRegistry, SERVICE, allows, grantsFromScopes, hashApiKey, levelIn, scopesOf } from '../src';

describe('grants', () => {
  it('reads levels per database from scopes, keeping the highest and ignoring others', () => {
    const grants = grantsFromScopes(['openid', 'lance:read', 'lance:write:sales', 'lance:admin:sales', 'lance:owner:x', 'other:admin', 'lance:write:'], 'lance');
    expect([...grants]).toEqual([
      ['*', 'read'],
      ['sales', 'admin'],
    ]);
    const p = { name: 'a', via: 'jwt' as const, grants, roles: [] };
    expect(allows(p, 'sales', 'admin')).toBe(true);
    expect(allows(p, 'default', 'read')).toBe(true);
    expect(allows(p, 'default', 'write')).toBe(false);
  });

  it('takes scopes from `scope` strings and `scp` arrays', () => {
    expect(scopesOf({ scope: 'a  b', scp: ['c', 1] })).toEqual(['a', 'b', 'c']);
    expect(scopesOf({ scp: 'd e' })).toEqual(['d', 'e']);
    expect(scopesOf({})).toEqual([]);
  });

  it('finds API keys by their hash only', () => {
    const registry = new ApiKeyRegistry([{ principal: 'etl', sha256: hashApiKey('s3cret').toUpperCase(), databases: ['main'], level: 'write' }]);
    expect(registry.find('s3cret')?.name).toBe('etl');
    expect(registry.find(hashApiKey('s3cret'))).toBeUndefined();
    expect(registry.find('S3cret')).toBeUndefined();
    expect(() => new ApiKeyRegistry([
      { principal: 'a', sha256: hashApiKey('k'), databases: ['*'], level: 'read' },
      { principal: 'b', sha256: hashApiKey('k'), databases: ['*'], level: 'read' },
    ])).toThrow(/twice/);
  });

  it('gives the anonymous (no auth configured) and service principals everything', () => {
    for (const p of [ANONYMOUS, SERVICE]) expect(allows(p, 'any', 'admin')).toBe(true);
  });

  it('tells the highest level a principal holds in a database, through it or through every database', () => {
    const p = { name: 'a', via: 'jwt' as const, grants: grantsFromScopes(['lance:read', 'lance:write:sales', 'lance:read:hr'], 'lance'), roles: [] };
    expect([levelIn(p, 'sales'), levelIn(p, 'hr'), levelIn(p, 'other')]).toEqual(['write', 'read', 'read']);
    expect(levelIn({ ...p, grants: grantsFromScopes(['lance:admin:sales'], 'lance') }, 'other')).toBeUndefined();
    expect(levelIn(ANONYMOUS, 'any')).toBe('admin');
  });
});
