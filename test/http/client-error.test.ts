/**
 * A request node:http cannot parse, pipelined behind requests whose answers are still being made:
 * the 400 goes after those answers (src/http/client-error.ts), so only the malformed request is
 * lost. Real sockets on 127.0.0.1; no timing: the client waits for the answers it expects.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { exchange, rawRequest } from '../helpers/raw-http.js';
import { type Fixture, expectVerifications, fixture, json, verify } from '../helpers/coalescing.js';

const UNPARSABLE = Buffer.from('NOT HTTP AT ALL\r\n\r\n', 'latin1');

let open: Fixture | undefined;
afterEach(async () => {
  await open?.sim.close();
  open = undefined;
});

describe('a request node:http cannot parse', () => {
  for (const coalesceWrites of [true, false]) {
    test(`pipelined answer lost behind an unparsable request (coalesceWrites ${String(coalesceWrites)})`, async () => {
      open = await fixture({ coalesceWrites }, 3);
      const { sim, keys } = open;
      const requests = keys.map((k) => verify(k.key, sim.rootKey));
      const out = await exchange(sim.url, [Buffer.concat([...requests, UNPARSABLE])], keys.length + 1);
      expect(out.answers).toHaveLength(keys.length + 1);
      expectVerifications(out.answers.slice(0, keys.length), keys);
      const last = out.answers.at(-1);
      expect(last?.status).toBe(400);
      expect(last?.headers.connection).toBe('close');
      expect((json(last) as { error: { detail: string } }).error.detail).toBe('The request could not be parsed as HTTP.');
    });
  }

  test('the 400 waits for an answer that is slower than the parser (an injected latency)', async () => {
    // 300 ms on every verification: node:http reports the unparsable bytes long before.
    open = await fixture({ faults: { latencyMs: 300 } }, 2);
    const { sim, keys } = open;
    const requests = keys.map((k) => verify(k.key, sim.rootKey));
    const out = await exchange(sim.url, [Buffer.concat([...requests, UNPARSABLE, UNPARSABLE])], keys.length + 1);
    expect(out.answers.map((a) => a.status)).toEqual([200, 200, 400]);
    expectVerifications(out.answers.slice(0, keys.length), keys);
    // One 400 for however many unreadable bytes follow, and nothing after it.
    expect(out.answers.reduce((sum, a) => sum + a.raw.length, 0)).toBe(out.bytes.length);
  });

  test('large answers owed (the OpenAPI document, written before its finish) come before the 400', async () => {
    open = await fixture({}, 0);
    const openApi = rawRequest('GET', '/openapi.json');
    const out = await exchange(open.sim.url, [Buffer.concat([openApi, openApi, UNPARSABLE])], 3);
    expect(out.answers.map((a) => a.status)).toEqual([200, 200, 400]);
    expect(out.answers[0]?.body.equals(out.answers[1]?.body ?? Buffer.alloc(0))).toBe(true);
  });

  test('with nothing owed, the 400 is written at once and the connection closes', async () => {
    open = await fixture({}, 0);
    const out = await exchange(open.sim.url, [UNPARSABLE], 1);
    expect(out.answers.map((a) => a.status)).toEqual([400]);
    const again = await exchange(open.sim.url, [verify('unknown', open.sim.rootKey)], 1);
    expect(again.answers.map((a) => a.status)).toEqual([200]);
  });
});
