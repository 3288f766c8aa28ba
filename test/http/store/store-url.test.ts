/** The `--store` URL: the forms keysim accepts, and a refusal that says why without showing a password. */
import { describe, expect, it } from 'vitest';
import { parseStoreUrl } from '../../../src/http/store/store-url.js';

describe('parseStoreUrl', () => {
  it('accepts redis://, rediss:// with credentials and a database, and redis-cluster:// with its nodes', () => {
    expect(parseStoreUrl('redis://h:1')).toEqual({ ok: true, value: { kind: 'redis', url: 'redis://h:1', shown: 'redis://h:1' } });
    expect(parseStoreUrl('rediss://u:p4ss@h:6380/2')).toEqual({
      ok: true,
      value: { kind: 'redis', url: 'rediss://u:p4ss@h:6380/2', shown: 'rediss://u:***@h:6380/2' },
    });
    expect(parseStoreUrl('redis-cluster://a:1,b:2')).toEqual({
      ok: true,
      value: { kind: 'cluster', nodes: [{ url: 'redis://a:1' }, { url: 'redis://b:2' }], shown: 'redis-cluster://a:1,b:2' },
    });
    expect(parseStoreUrl('redis-cluster://admin:s%40cret@a:1')).toEqual({
      ok: true,
      value: { kind: 'cluster', nodes: [{ url: 'redis://a:1' }], shown: 'redis-cluster://admin:***@a:1', username: 'admin', password: 's@cret' },
    });
  });

  const refusals: Array<[string, RegExp]> = [
    ['localhost:6379', /has no scheme/],
    ['http://h:1', /scheme "http"/],
    ['redis://h', /names no port/],
    ['redis://h:1/db', /database number/],
    ['redis-cluster://a:1,b', /"b" is not HOST:PORT/],
    ['redis-cluster://a:70000', /port 70000 is out of range/],
    ['redis-cluster://', /names no node/],
    ['redis://:hunter2@h', /names no port/],
  ];
  const refusal = (text: string): string => {
    const parsed = parseStoreUrl(text);
    return parsed.ok ? '' : parsed.message;
  };

  it('a password in a store URL without a scheme is shown in the refusal', () => {
    expect(refusal('u:s3cretpw@h:1')).not.toContain('s3cret');
  });

  it('a password holding an @ is partly shown in the refusal', () => {
    const message = refusal('redis://u:s3cret@pw@h');
    expect(message).not.toContain('s3cret');
    expect(message).not.toContain('pw@');
    expect(message).toContain('redis://u:***@h');
  });

  for (const [text, why] of refusals) {
    it(`refuses ${text} saying why, and names the forms accepted`, () => {
      const parsed = parseStoreUrl(text);
      expect(parsed.ok).toBe(false);
      const message = parsed.ok ? '' : parsed.message;
      expect(message).toMatch(why);
      expect(message).toMatch(/give redis:\/\/HOST:PORT\[\/DB\]/);
      expect(message).not.toContain('hunter2');
    });
  }
});
