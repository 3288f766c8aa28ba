/**
 * A refused operator call ends its connection (`connection: close`). The server half-closes and
 * lingers instead of letting go of the socket at once (body.ts, lingeringClose): bytes the client
 * sends after the answer would otherwise make the kernel reset the connection, losing the answers
 * to the requests pipelined before it. Real sockets on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { exchange, rawPost, rawRequest } from '../helpers/raw-http.js';
import { type Fixture, expectVerifications, fixture, verify } from '../helpers/coalescing.js';

describe('a refused operator call among pipelined requests', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({}, 2);
  });
  afterAll(() => f.sim.close());

  test('earlier pipelined answers lost to a reset when the refused request ends after its answer', async () => {
    const [a] = f.keys;
    if (a === undefined) throw new Error('keys');
    const refused = rawPost('/_sim/clock.advance', { byMs: 1000 }, 'not-the-operator');
    // Two large answers first (the OpenAPI document), still on their way when the refusal is
    // written; the operator check refuses on the headers, and the body's last bytes come in a
    // later write, after the answer.
    const openApi = rawRequest('GET', '/openapi.json');
    const head = Buffer.concat([openApi, openApi, verify(a.key, f.sim.rootKey), refused.subarray(0, refused.length - 8)]);
    const tail = refused.subarray(refused.length - 8);
    // Several connections: without the linger nearly every one lost answers (the tail reset it).
    for (let round = 0; round < 8; round++) {
      const out = await exchange(f.sim.url, [head, tail], 4, { spread: true });
      expect(
        out.answers.map((x) => x.status),
        `round ${round}: ${out.error?.code ?? 'no error'}, ${out.bytes.length} bytes`,
      ).toEqual([200, 200, 200, 401]);
      expect(out.answers[0]?.body.equals(out.answers[1]?.body ?? Buffer.alloc(0))).toBe(true);
      expectVerifications(out.answers.slice(2, 3), [a]);
      expect(out.answers[3]?.headers.connection).toBe('close');
    }
  });

  test('a request pipelined after the refused one is neither answered nor run', async () => {
    const before = f.sim.clock.now();
    const out = await exchange(
      f.sim.url,
      [Buffer.concat([rawPost('/_sim/clock.advance', { byMs: 1000 }, 'not-the-operator'), rawPost('/_sim/clock.advance', { byMs: 60_000 }, f.sim.rootKey)])],
      2,
    );
    expect(out.closedByServer).toBe(true);
    expect(out.answers.map((x) => x.status)).toEqual([401]);
    expect(f.sim.clock.now()).toBe(before);
    // The simulator goes on answering on other connections.
    const next = await exchange(f.sim.url, [rawPost('/_sim/clock.advance', { byMs: 60_000 }, f.sim.rootKey)], 1);
    expect(next.answers.map((x) => x.status)).toEqual([200]);
    expect(f.sim.clock.now()).toBe(before + 60_000);
  });
});
