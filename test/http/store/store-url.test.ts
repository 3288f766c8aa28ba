/**
 * The `--store` URL (store-url.ts): the forms accepted and what they are parsed into, every wrong
 * form refused with a message saying what is wrong, and never a password in a message or in the
 * URL as shown (logs, the serve banner, `sim.store.url`).
 */
import { describe, expect, it, test } from 'vitest';
import { parseStoreUrl, type StoreUrl } from '../../../src/http/store/store-url.js';

function accepted(text: string): StoreUrl {
  const parsed = parseStoreUrl(text);
  if (!parsed.ok) throw new Error(`refused ${text}: ${parsed.message}`);
  return parsed.value;
}

function refusal(text: string): string {
  const parsed = parseStoreUrl(text);
  if (parsed.ok) throw new Error(`accepted ${text}: ${JSON.stringify(parsed.value)}`);
  return parsed.message;
}

describe('accepted forms', () => {
  test('redis://HOST:PORT', () => {
    expect(accepted('redis://h:1')).toEqual({ kind: 'redis', url: 'redis://h:1', shown: 'redis://h:1' });
  });

  test('rediss://USER:PASSWORD@HOST:PORT/DB keeps the URL for the client and shows it without the password', () => {
    expect(accepted('rediss://u:p@h:6380/2')).toEqual({ kind: 'redis', url: 'rediss://u:p@h:6380/2', shown: 'rediss://u:***@h:6380/2' });
  });

  test('IPv6 hosts and a password alone (no user name)', () => {
    expect(accepted('redis://[::1]:6379')).toMatchObject({ kind: 'redis', url: 'redis://[::1]:6379' });
    expect(accepted('redis://:secret@localhost:6379/0').shown).toBe('redis://:***@localhost:6379/0');
  });

  test('redis-cluster://HOST:PORT,HOST:PORT: every node, no credentials', () => {
    expect(accepted('redis-cluster://a:1,b:2')).toEqual({
      kind: 'cluster',
      nodes: [{ url: 'redis://a:1' }, { url: 'redis://b:2' }],
      shown: 'redis-cluster://a:1,b:2',
    });
  });

  test('redis-cluster://USER:PASSWORD@…: the user name and password parsed (%-escapes decoded), the nodes after them', () => {
    expect(accepted('redis-cluster://ops:s%3Acret@a:1,b:2,c:3')).toEqual({
      kind: 'cluster',
      nodes: [{ url: 'redis://a:1' }, { url: 'redis://b:2' }, { url: 'redis://c:3' }],
      shown: 'redis-cluster://ops:***@a:1,b:2,c:3',
      username: 'ops',
      password: 's:cret',
    });
    expect(accepted('redis-cluster://:only-a-password@a:1')).toMatchObject({ password: 'only-a-password' });
    expect(accepted('redis-cluster://only-a-user@a:1')).toMatchObject({ username: 'only-a-user' });
    expect(accepted('redis-cluster://only-a-user@a:1')).not.toHaveProperty('password');
  });
});

describe('refused forms, each saying why', () => {
  const FORMS = /give redis:\/\/HOST:PORT\[\/DB\], rediss:\/\/HOST:PORT\[\/DB\] or redis-cluster:\/\/HOST:PORT,HOST:PORT/;

  test.each([
    ['no scheme', 'localhost:6379', /has no scheme/],
    ['http://', 'http://h:1', /has the scheme "http", which keysim cannot use as a store/],
    ['no port', 'redis://h', /names no port/],
    ['no host', 'redis://:1', /not a URL|names no host/],
    ['a database that is not a number', 'redis://h:1/zero', /has "zero" as its database number/],
    ['a query', 'redis://h:1?db=2', /has a query or fragment/],
    ['a cluster node without a port', 'redis-cluster://a:1,b', /has a node that is wrong: "b" is not HOST:PORT/],
    ['a cluster without nodes', 'redis-cluster://', /names no node/],
    ['a cluster port out of range', 'redis-cluster://a:1,b:70000', /port 70000 is out of range \(1 to 65535\)/],
    ['a cluster port 0', 'redis-cluster://a:0', /port 0 is out of range/],
  ])('%s', (_what, text, why) => {
    const message = refusal(text);
    expect(message).toMatch(why);
    expect(message).toMatch(FORMS);
    expect(message).toContain(JSON.stringify(text));
  });

  test('a redis:// port out of range says so (it said only "is not a URL", and port 0 was accepted)', () => {
    expect(refusal('redis://h:70000')).toMatch(/port 70000 is out of range \(1 to 65535\)/);
    expect(refusal('rediss://u:p@h:65536/1')).toMatch(/port 65536 is out of range/);
    expect(refusal('redis://h:0')).toMatch(/port 0 is out of range/);
  });

  test('a scheme with "+" in it is named as that scheme (it was said to be no scheme at all)', () => {
    expect(refusal('redis+tls://h:1')).toMatch(/has the scheme "redis\+tls", which keysim cannot use/);
  });

  test('a broken %-escape in the credentials is refused with a message (a cluster URL threw URIError, a single one failed only at connect)', () => {
    expect(() => parseStoreUrl('redis-cluster://u:100%@a:1')).not.toThrow();
    expect(refusal('redis-cluster://u:100%@a:1')).toMatch(/%-escape.*%25/);
    expect(refusal('redis://u:100%zz@h:1')).toMatch(/%-escape.*%25/);
  });
});

describe('no message and no shown URL ever holds the password', () => {
  const PASSWORD = 'Hunter2-secret';

  test.each([
    ['a wrong scheme', `http://u:${PASSWORD}@h:1`],
    ['no port', `redis://u:${PASSWORD}@h`],
    ['a bad database', `redis://u:${PASSWORD}@h:1/x`],
    ['a cluster node without a port', `redis-cluster://u:${PASSWORD}@a:1,b`],
    ['a port out of range', `rediss://u:${PASSWORD}@h:99999`],
  ])('refused for %s', (_what, text) => {
    expect(refusal(text)).not.toContain(PASSWORD);
    expect(refusal(text)).toContain('u:***@');
  });

  test('a password holding "@" or "/" was shown in part, or whole, in the URL shown and in refusals', () => {
    expect(accepted(`redis://u:${PASSWORD}@x@h:1`).shown).toBe('redis://u:***@h:1');
    expect(accepted(`redis-cluster://u:${PASSWORD}@x@a:1`)).toMatchObject({ shown: 'redis-cluster://u:***@a:1', password: `${PASSWORD}@x` });
    const slash = refusal(`redis://u:${PASSWORD}/x@h:1`);
    expect(slash).not.toContain(PASSWORD);
    expect(slash).not.toContain('/x@');
  });

  test('a URL without a scheme, or with one keysim does not know, hides its password too (they were shown whole)', () => {
    for (const text of [`:${PASSWORD}@h:1`, `u:${PASSWORD}@h:1`, `redis+tls://u:${PASSWORD}@h:1`, `REDIS-CLUSTER://u:${PASSWORD}@a:1,b`]) {
      expect(refusal(text), text).not.toContain(PASSWORD);
    }
  });

  test('what an accepted URL shows never holds the password', () => {
    for (const text of [`redis://u:${PASSWORD}@h:1`, `rediss://:${PASSWORD}@h:1/3`, `redis-cluster://u:${PASSWORD}@a:1,b:2`, `redis://u:${PASSWORD}:x@h:1`]) {
      expect(accepted(text).shown, text).not.toContain(PASSWORD);
    }
  });
});

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
