/**
 * refill-midnight's reading of a live target's clock (scenarios/support/target-time.ts) from the
 * Date headers of real HTTPS answers on 127.0.0.1: over keysim's own client, so that it trusts
 * the run's --ca and asks for answers uncompressed, as every other call of the run does.
 */
import { createServer } from 'node:https';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { targetTime } from '../../scenarios/support/target-time.js';
import type { ScenarioContext } from '../../src/load/scenario/scenario.js';
import { TEST_TLS_CERT, TEST_TLS_KEY } from '../helpers/tls-fixture.js';

let server: Server;
let url: string;
const seen: IncomingHttpHeaders[] = [];
/** The service clock this server pretends to: 37 minutes ahead of this machine's. */
const AHEAD_MS = 37 * 60_000;

beforeAll(async () => {
  server = createServer({ key: TEST_TLS_KEY, cert: TEST_TLS_CERT }, (req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({ meta: { requestId: 'req_probe' }, data: { valid: false, code: 'NOT_FOUND' } });
      res.writeHead(200, { 'content-type': 'application/json', date: new Date(Date.now() + AHEAD_MS).toUTCString() }).end(body);
    });
  }) as unknown as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A live target's context: no admin surface, the run's --ca. */
function liveContext(ca: string | undefined): ScenarioContext {
  return {
    admin: undefined,
    target: { kind: 'live', url, ...(ca === undefined ? {} : { ca }) },
    tag: 'keysim-test',
    settings: { timeoutMs: 5_000 },
  } as unknown as ScenarioContext;
}

test("a live target's clock is read over TLS with the run's --ca (target-time used undici, which ignored --ca: no sample came)", async () => {
  const time = await targetTime(liveContext(TEST_TLS_CERT));
  expect(time.source).toBe('date-header');
  // The Date header has a resolution of one second, the round trips on a busy machine add to it.
  expect(Math.abs(time.offsetMs - AHEAD_MS)).toBeLessThan(time.uncertaintyMs + 1_000);
}, 60_000);

test("the clock probes ask for answers uncompressed (accept-encoding: identity), like keysim's other calls", async () => {
  seen.length = 0;
  await targetTime(liveContext(TEST_TLS_CERT));
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.map((h) => h['accept-encoding'])).toEqual(seen.map(() => 'identity'));
}, 60_000);

test('without the CA the certificate is refused, and the error says so rather than passing for a lost answer', async () => {
  await expect(targetTime(liveContext(undefined))).rejects.toThrow(/certificate/i);
}, 60_000);
