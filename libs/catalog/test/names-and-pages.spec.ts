import { ErrorCode, SortedNames, defaultTableLocation, parseMode, safeSegment, takePage, validateName } from '../src';
import { expectCode } from './support';

describe('names, locations, modes and pages', () => {
  it('refuses names that cannot be addressed', () => {
    expect(validateName('ok name', 'n')).toBe('ok name');
    expectCode(() => validateName('', 'n'), ErrorCode.InvalidInput);
    expectCode(() => validateName('a$b', 'n'), ErrorCode.InvalidInput, /delimiter/);
    expectCode(() => validateName('a.b', 'n', '.'), ErrorCode.InvalidInput);
    expectCode(() => validateName('a\u0000b', 'n'), ErrorCode.InvalidInput);
    expectCode(() => validateName('a\nb', 'n'), ErrorCode.InvalidInput);
    expectCode(() => validateName(7, 'n'), ErrorCode.InvalidInput);
    expectCode(() => validateName('x'.repeat(1025), 'n'), ErrorCode.InvalidInput);
  });

  it('derives unique locations that no hostile name can steer', () => {
    expect(safeSegment('..')).toBe('__');
    expect(safeSegment('a/b')).toBe('a_b');
    expect(safeSegment('')).toBe('_');
    const a = defaultTableLocation('/wh/db', ['..', '..', 'etc'], '11111111-2222-3333-4444-555555555555');
    expect(a).toBe('/wh/db/__/__/etc-111111112222.lance');
    const b = defaultTableLocation('/wh/db', ['..', '..', 'etc'], '99999999-2222-3333-4444-555555555555');
    expect(b).not.toBe(a);
    expect(a.split('/')).not.toContain('..');
  });

  it('parses modes case-insensitively in PascalCase or snake_case', () => {
    const modes = ['Create', 'ExistOk', 'Overwrite'] as const;
    expect(parseMode('exist_ok', modes, 'mode', 'Create')).toBe('ExistOk');
    expect(parseMode('EXISTOK', modes, 'mode', 'Create')).toBe('ExistOk');
    expect(parseMode(undefined, modes, 'mode', 'Create')).toBe('Create');
    expectCode(() => parseMode('append', modes, 'mode', 'Create'), ErrorCode.InvalidInput, /Create, ExistOk, Overwrite/);
    expectCode(() => parseMode(3, modes, 'mode', 'Create'), ErrorCode.InvalidInput);
  });

  it('keeps names sorted and pages them with an inclusive limit', () => {
    const names = new SortedNames();
    for (const n of ['m', 'b', 'z', 'b', 'a']) names.add(n);
    expect(names.toArray()).toEqual(['a', 'b', 'm', 'z']);
    names.delete('m');
    expect([...names.after('a')]).toEqual(['b', 'z']);
    expect([...names.after('c')]).toEqual(['z']);
    expect(takePage(names.after(), 2, (n) => n)).toEqual({ items: ['a', 'b'], pageToken: 'b' });
    expect(takePage(names.after(), 3, (n) => n)).toEqual({ items: ['a', 'b', 'z'], pageToken: null });
    expect(takePage(names.after(), undefined, (n) => n)).toEqual({ items: ['a', 'b', 'z'], pageToken: null });
  });

  it('slices the same pages as it walks, for every token and limit', () => {
    const names = new SortedNames();
    for (const n of ['d', 'a', 'c', 'e', 'b']) names.add(n);
    for (const token of [undefined, '', 'a', 'b2', 'c', 'e', 'f']) {
      for (const limit of [undefined, 0, 1, 2, 4, 5, 6]) {
        const walked = takePage(names.after(token), limit, (n) => n);
        const { names: items, more } = names.page(token, limit);
        expect({ items, pageToken: more && items.length ? items[items.length - 1] : null }).toEqual(walked);
      }
    }
  });
});
