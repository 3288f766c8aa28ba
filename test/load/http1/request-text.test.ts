/**
 * The open model's request text: the target's base path in front of every path, the root key only
 * on authorized requests, the history's sequence header when there is one, the body's length in
 * bytes (not characters), and the socket address and TLS from the URL.
 */
import { describe, expect, test } from 'vitest';
import { RequestText, endpointOf } from '../../../src/load/http1/request-text.js';

describe('request text', () => {
  const text = new RequestText(new URL('https://api.example.com:8443/base/'), 'root_abc');

  test('an authorized request with a sequence number, under the base path', () => {
    const body = '{"key":"café"}';
    expect(text.post('keys.verifyKey', false, 'x-keysim-seq', 42, body)).toBe(
      'POST /base/v2/keys.verifyKey HTTP/1.1\r\nhost: api.example.com:8443\r\nconnection: keep-alive\r\naccept-encoding: identity\r\ncontent-type: application/json\r\n' +
        `authorization: Bearer root_abc\r\nx-keysim-seq: 42\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect(Buffer.byteLength(body)).toBe(body.length + 1);
  });

  test('an anonymous request has no authorization; without a history, no sequence header', () => {
    const out = text.post('keys.verifyKey', true, 'x-keysim-seq', undefined, '{}');
    expect(out).not.toMatch(/authorization/i);
    expect(out).not.toMatch(/x-keysim-seq/);
    expect(out.endsWith('content-length: 2\r\n\r\n{}')).toBe(true);
    // The authorized head is cached apart from the anonymous one.
    expect(text.post('keys.verifyKey', false, 'x-keysim-seq', undefined, '{}')).toMatch(/authorization: Bearer root_abc/);
  });

  test('a root key that would break the header is refused, saying why', () => {
    expect(() => new RequestText(new URL('http://127.0.0.1:1'), 'root\r\nx-evil: 1')).toThrow(/line break/);
  });
});

describe('endpointOf', () => {
  test.each([
    ['http://127.0.0.1:8080/x', { host: '127.0.0.1', port: 8080, tls: false }],
    ['https://api.example.com', { host: 'api.example.com', port: 443, tls: true }],
    ['http://example.com', { host: 'example.com', port: 80, tls: false }],
    ['http://[::1]:9000', { host: '::1', port: 9000, tls: false }],
  ])('%s', (url, endpoint) => {
    expect(endpointOf(new URL(url))).toEqual(endpoint);
  });

  test('another scheme is refused with the form expected', () => {
    expect(() => endpointOf(new URL('ftp://example.com'))).toThrow(/http:\/\/ or https:\/\//);
  });
});
