/**
 * The README's vitest example (`test/leap-refill.test.ts`), verbatim apart from the import path
 * ('keysim' there): readme-examples.test.ts checks that the two agree, so if this test breaks, the
 * README is wrong.
 */
import { Unkey } from '@unkey/api';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/index.js';

let sim: Simulator;
let unkey: Unkey;
let apiId: string;

beforeAll(async () => {
  sim = await createSimulator({ startMs: Date.parse('2028-02-28T23:59:59.999Z') });
  unkey = new Unkey({ rootKey: sim.rootKey, serverURL: sim.url });
});
beforeEach(async () => {
  sim.reset(); // start state, clock back at its start
  apiId = (await unkey.apis.createApi({ name: 'billing' })).data.apiId;
});
afterAll(() => sim.close());

test('refillDay 31 refills on 29 February in a leap year', async () => {
  const { data } = await unkey.keys.createKey({
    apiId,
    credits: { remaining: 1, refill: { interval: 'monthly', amount: 100, refillDay: 31 } },
  });
  expect((await unkey.keys.verifyKey({ key: data.key })).data.credits).toBe(0);
  expect((await unkey.keys.verifyKey({ key: data.key })).data.code).toBe('USAGE_EXCEEDED');

  sim.clock.advance(1); // → 2028-02-29T00:00:00.000Z

  expect((await unkey.keys.verifyKey({ key: data.key })).data.credits).toBe(99);
});
