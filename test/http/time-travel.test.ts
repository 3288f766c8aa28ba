/**
 * Time travel through HTTP only: /_sim/clock.set and /_sim/clock.advance move the service clock,
 * and refills, /_sim/reset and snapshots follow it (docs/service-model.md#refill and #time).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { call, expectV2Error, locationsOf, postJson } from '../helpers/http.js';

/** Before every instant the tests travel to: the clock only moves forward. */
const START_MS = Date.parse('2026-12-01T00:00:00.000Z');

let sim: Simulator;

beforeAll(async () => {
  sim = await createSimulator({ startMs: START_MS, seed: 11, validateResponses: true });
});
afterAll(() => sim.close());
beforeEach(async () => {
  const reset = await call<{ nowMs: number }>(sim, '/_sim/reset', {});
  expect(reset.nowMs).toBe(START_MS);
});

interface ClockView {
  nowMs: number;
  iso: string;
  mode: string;
}

const clockGet = () => call<ClockView>(sim, '/_sim/clock.get', {});
const clockSet = (to: string | number) => call<ClockView>(sim, '/_sim/clock.set', { to });
const clockAdvance = (byMs: number) => call<ClockView>(sim, '/_sim/clock.advance', { byMs });

interface VerifyData {
  valid: boolean;
  code: string;
  credits?: number;
}
const verify = (key: string) => call<VerifyData>(sim, '/v2/keys.verifyKey', { key });
const remainingOf = async (keyId: string) => (await call<{ credits?: { remaining: number | null } }>(sim, '/v2/keys.getKey', { keyId })).credits?.remaining;

/** A key on a new API with `remaining` credits and a monthly refill of 100 on day 31. */
async function day31Key(remaining: number): Promise<{ keyId: string; key: string }> {
  const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'billing' });
  return call<{ keyId: string; key: string }>(sim, '/v2/keys.createKey', {
    apiId,
    credits: { remaining, refill: { interval: 'monthly', amount: 100, refillDay: 31 } },
  });
}

/** Verifies until the key is drained: `remaining` VALID answers counting down, then USAGE_EXCEEDED at 0. */
async function drain(key: string, remaining: number): Promise<void> {
  for (let left = remaining - 1; left >= 0; left--) {
    expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: left });
  }
  expect(await verify(key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 0 });
}

describe('monthly refill on day 31 at the end of February', () => {
  test('2028 (leap year): drained at 2028-02-28T23:59:59.999Z, advanced 1 ms → refilled on 29 February', async () => {
    expect(await clockSet('2028-02-28T23:59:59.999Z')).toMatchObject({
      nowMs: Date.parse('2028-02-28T23:59:59.999Z'),
      iso: '2028-02-28T23:59:59.999Z',
      mode: 'manual',
    });
    const { keyId, key } = await day31Key(3);
    await drain(key, 3);
    expect(await remainingOf(keyId)).toBe(0);

    expect(await clockAdvance(0)).toMatchObject({ iso: '2028-02-28T23:59:59.999Z' });
    expect(await remainingOf(keyId)).toBe(0);

    expect(await clockAdvance(1)).toMatchObject({ nowMs: Date.parse('2028-02-29T00:00:00.000Z'), iso: '2028-02-29T00:00:00.000Z' });
    expect(await remainingOf(keyId)).toBe(100);
    expect(await verify(key)).toMatchObject({ valid: true, code: 'VALID', credits: 99 });
  });

  test('2028: 28 February is not the boundary — a key drained before it stays drained until the 29th', async () => {
    await clockSet('2028-02-27T23:59:59.999Z');
    const { keyId, key } = await day31Key(1);
    await drain(key, 1);
    expect(await clockAdvance(1)).toMatchObject({ iso: '2028-02-28T00:00:00.000Z' });
    expect(await remainingOf(keyId)).toBe(0);
    expect(await verify(key)).toMatchObject({ code: 'USAGE_EXCEEDED', credits: 0 });

    await clockSet(Date.parse('2028-02-28T23:59:59.999Z'));
    expect(await remainingOf(keyId)).toBe(0);
    await clockAdvance(1);
    expect(await remainingOf(keyId)).toBe(100);

    // And the next boundary is 31 March, not 29 or 30 March.
    await drain(key, 100);
    await clockSet('2028-03-30T23:59:59.999Z');
    expect(await remainingOf(keyId)).toBe(0);
    await clockAdvance(1);
    expect(await clockGet()).toMatchObject({ iso: '2028-03-31T00:00:00.000Z' });
    expect(await remainingOf(keyId)).toBe(100);
  });

  test('2027 (common year): drained at 2027-02-27T23:59:59.999Z, advanced 1 ms → refilled on 28 February', async () => {
    expect(await clockSet('2027-02-27T23:59:59.999Z')).toMatchObject({ iso: '2027-02-27T23:59:59.999Z' });
    const { keyId, key } = await day31Key(2);
    await drain(key, 2);
    expect(await remainingOf(keyId)).toBe(0);

    expect(await clockAdvance(1)).toMatchObject({ nowMs: Date.parse('2027-02-28T00:00:00.000Z'), iso: '2027-02-28T00:00:00.000Z' });
    expect(await remainingOf(keyId)).toBe(100);
    expect(await verify(key)).toMatchObject({ valid: true, credits: 99 });
  });

  test('a jump over many boundaries refills once to the amount (a refill replaces, it does not add)', async () => {
    await clockSet('2027-02-27T23:59:59.999Z');
    const { keyId, key } = await day31Key(2);
    await drain(key, 2);
    await clockAdvance(3 * 365 * 86_400_000);
    expect(await remainingOf(keyId)).toBe(100);
  });
});

describe('the clock only moves forward', () => {
  test('clock.set backwards → 400 and the clock is unchanged', async () => {
    await clockSet('2028-02-29T12:00:00.000Z');
    const backwards = await postJson(sim.url, '/_sim/clock.set', { to: '2028-02-29T11:59:59.999Z' }, sim.rootKey);
    expectV2Error(backwards, 400, 'application/invalid_input');
    expect(await clockGet()).toMatchObject({ nowMs: Date.parse('2028-02-29T12:00:00.000Z') });

    const backwardsMs = await postJson(sim.url, '/_sim/clock.set', { to: START_MS }, sim.rootKey);
    expectV2Error(backwardsMs, 400, 'application/invalid_input');
    expect(await clockGet()).toMatchObject({ iso: '2028-02-29T12:00:00.000Z' });

    // Setting it to now is allowed and changes nothing.
    expect(await clockSet('2028-02-29T12:00:00.000Z')).toMatchObject({ iso: '2028-02-29T12:00:00.000Z' });
  });

  test('clock.advance by a negative or fractional step, or to a date that is not one → 400, clock unchanged', async () => {
    const before = await clockGet();
    for (const byMs of [-1, 1.5, '1000', null]) {
      const answer = await postJson(sim.url, '/_sim/clock.advance', { byMs }, sim.rootKey);
      expectV2Error(answer, 400, 'application/invalid_input');
      expect(locationsOf(answer)).toContain('body.byMs');
    }
    for (const to of ['tomorrow', '2028-13-45T00:00:00Z', '']) {
      expectV2Error(await postJson(sim.url, '/_sim/clock.set', { to }, sim.rootKey), 400, 'application/invalid_input');
    }
    expect(await clockGet()).toEqual(before);
  });

  test('an instant past the last one a date can show (8.64e15 ms, +275760-09-13) → 400, and the clock is unchanged', async () => {
    await clockSet('2028-02-29T12:00:00.000Z');
    const before = await clockGet();
    for (const to of [Number.MAX_SAFE_INTEGER, 8_640_000_000_000_001]) {
      expectV2Error(await postJson(sim.url, '/_sim/clock.set', { to }, sim.rootKey), 400, 'application/invalid_input');
      expect(await clockGet()).toEqual(before);
    }
    expectV2Error(
      await postJson(sim.url, '/_sim/clock.advance', { byMs: Number.MAX_SAFE_INTEGER - before.nowMs }, sim.rootKey),
      400,
      'application/invalid_input',
    );
    expect(await clockGet()).toEqual(before);
    // The clock still moves normally afterwards.
    expect(await clockAdvance(1)).toMatchObject({ nowMs: before.nowMs + 1 });
  });

  test('clock.set accepts ISO-8601 and Unix ms, and the admin calls need a root key', async () => {
    expect(await clockSet('2027-06-01T00:00:00Z')).toMatchObject({ nowMs: Date.parse('2027-06-01T00:00:00Z') });
    expect(await clockSet(Date.parse('2027-06-02T00:00:00Z'))).toMatchObject({ iso: '2027-06-02T00:00:00.000Z' });
    expectV2Error(await postJson(sim.url, '/_sim/clock.advance', { byMs: 1 }, null), 400, 'authentication/missing');
    expectV2Error(await postJson(sim.url, '/_sim/clock.advance', { byMs: 1 }, 'root_unknown_123456'), 401, 'authentication/key_not_found');
    expect(await clockGet()).toMatchObject({ iso: '2027-06-02T00:00:00.000Z' });
  });
});

describe('/_sim/reset and snapshots over HTTP', () => {
  test('/_sim/reset gives the start state: the same root key works, the clock is back at its start, no APIs', async () => {
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'to-forget' });
    const { key } = await call<{ key: string }>(sim, '/v2/keys.createKey', { apiId });
    await call(sim, '/v2/identities.createIdentity', { externalId: 'to_forget' });
    await clockSet('2029-01-01T00:00:00Z');

    const reset = await call<ClockView>(sim, '/_sim/reset', {});
    expect(reset).toMatchObject({ nowMs: START_MS, iso: new Date(START_MS).toISOString() });
    expect(await clockGet()).toMatchObject({ nowMs: START_MS });

    const snapshot = await call<{ apis: unknown[]; keys: unknown[]; identities: unknown[]; workspaces: unknown[]; takenAtMs: number }>(
      sim,
      '/_sim/snapshot',
      {},
    );
    expect(snapshot).toMatchObject({ apis: [], keys: [], identities: [], takenAtMs: START_MS });
    expect(snapshot.workspaces).toHaveLength(1);

    expectV2Error(await postJson(sim.url, '/v2/keys.createKey', { apiId }, sim.rootKey), 404, 'data/api_not_found');
    expect(await verify(key)).toEqual({ valid: false, code: 'NOT_FOUND' });
    expectV2Error(await postJson(sim.url, '/v2/identities.getIdentity', { identity: 'to_forget' }, sim.rootKey), 404, 'data/identity_not_found');
    // The root key still works for everything.
    await call(sim, '/v2/apis.createApi', { name: 'after-reset' });
  });

  test('snapshot → changes → restore → the same snapshot; the changes are gone', async () => {
    await clockSet('2028-02-28T23:59:59.999Z');
    const { keyId, key } = await day31Key(5);
    await call(sim, '/v2/identities.createIdentity', { externalId: 'kept', meta: { a: 1 } });
    await call(sim, '/_sim/namespaces.create', { name: 'email' });
    await call(sim, '/v2/ratelimit.limit', { namespace: 'email', identifier: 'x', limit: 3, duration: 60_000 });
    const taken = await call<Record<string, unknown>>(sim, '/_sim/snapshot', {});

    await verify(key);
    await verify(key);
    await call(sim, '/v2/identities.createIdentity', { externalId: 'made_later' });
    await call(sim, '/v2/identities.deleteIdentity', { identity: 'kept' });
    await call(sim, '/v2/ratelimit.limit', { namespace: 'email', identifier: 'x', limit: 3, duration: 60_000 });
    expect(await remainingOf(keyId)).toBe(3);

    await call(sim, '/_sim/restore', { snapshot: taken });
    expect(await call(sim, '/_sim/snapshot', {})).toEqual(taken);
    expect(await remainingOf(keyId)).toBe(5);
    expectV2Error(await postJson(sim.url, '/v2/identities.getIdentity', { identity: 'made_later' }, sim.rootKey), 404, 'data/identity_not_found');
    expect(await call(sim, '/v2/identities.getIdentity', { identity: 'kept' })).toMatchObject({ externalId: 'kept', meta: { a: 1 } });
    expect(await call(sim, '/v2/ratelimit.limit', { namespace: 'email', identifier: 'x', limit: 3, duration: 60_000 })).toMatchObject({
      success: true,
      remaining: 1,
    });

    // The refill calendar carries on from the restored state.
    await drain(key, 5);
    await clockAdvance(1);
    expect(await remainingOf(keyId)).toBe(100);
  });

  test('restoring a bad snapshot → 400 and nothing changes', async () => {
    await day31Key(5);
    const before = await call<Record<string, unknown>>(sim, '/_sim/snapshot', {});
    const keys = before.keys as Array<Record<string, unknown>>;
    const corrupt = { ...before, keys: keys.map((k, i) => (i === 0 ? { ...k, remaining: 'lots' } : k)) };
    for (const snapshot of [{}, { format: 'keysim-engine-snapshot', version: 999 }, { ...before, keys: 'nope' }, corrupt]) {
      expectV2Error(await postJson(sim.url, '/_sim/restore', { snapshot }, sim.rootKey), 400, 'application/invalid_input');
      expect(await call(sim, '/_sim/snapshot', {})).toEqual(before);
    }
  });
});
