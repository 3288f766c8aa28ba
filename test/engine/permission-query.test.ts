import { describe, expect, it } from 'vitest';
import { parsePermissionQuery, satisfiesPermissionQuery } from '../../src/engine/permission-query.js';

const held = ['a', 'b'];
function answer(query: string): boolean | string {
  const parsed = parsePermissionQuery(query);
  return parsed.ok ? satisfiesPermissionQuery(parsed.value, held) : parsed.error.detail;
}

describe('permission queries', () => {
  it('"a and b" was refused with 400: AND / OR are case-insensitive, as in the production service', () => {
    expect(answer('a and b')).toBe(true);
    expect(answer('a And c')).toBe(false);
    expect(answer('c or a')).toBe(true);
    expect(answer('c oR d')).toBe(false);
    // Precedence does not depend on the case: (c and d) or a.
    expect(answer('c and d or a')).toBe(true);
    expect(answer('(c Or a) aNd b')).toBe(true);
    expect(parsePermissionQuery('x and (y OR z)')).toEqual(parsePermissionQuery('x AND (y OR z)'));
  });

  it('an operator in any case still cannot stand for a name', () => {
    for (const query of ['and', 'a or', 'OR a', 'a and or b']) expect(typeof answer(query)).toBe('string');
  });

  it('a syntax error names where it is, not the text the client sent', () => {
    const secret = 'sk_live_0123456789abcdef';
    for (const query of [`a ${secret}`, `${secret})`, `(${secret}`, `a AND ${secret} ${secret}`]) {
      const parsed = parsePermissionQuery(query);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(JSON.stringify(parsed.error)).not.toContain('sk_live');
    }
    const parsed = parsePermissionQuery('a b');
    expect(parsed.ok ? '' : parsed.error.detail).toContain('token 2 of 2');
  });
});
