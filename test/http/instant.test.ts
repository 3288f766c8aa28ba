/**
 * Impossible calendar dates are refused, never rolled over: `Date.parse('2028-02-30')` is 1 March,
 * which moved `serve --start` and `/_sim/clock.set` to a day nobody asked for.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { parseInstant } from '../../src/http/instant.js';
import { expectV2Error, postJson } from '../helpers/http.js';

describe('impossible dates are refused, not rolled over to March', () => {
  test.each([
    ['2028-02-30', 'day 30 does not exist in 2028-02 (it has 29 days)'],
    ['2030-02-29T00:00:00Z', 'day 29 does not exist in 2030-02 (it has 28 days)'],
    ['2030-04-31T12:00:00Z', 'day 31 does not exist in 2030-04'],
    ['2030-13-01T00:00:00Z', 'month 13 does not exist'],
    ['2030-00-10', 'month 00 does not exist'],
    ['2030-01-01T24:00:00Z', 'hour 24 does not exist'],
    ['2030-01-01T23:60:00Z', 'minute 60 does not exist'],
    ['2030-01-01T23:59:60Z', 'second 60 does not exist'],
    ['2030-01-01T10:00:00+25:00', 'offset +25:00 does not exist'],
    ['2030-01-01 and then some', 'not of the form'],
  ])('%s', (text, why) => {
    const parsed = parseInstant(text, '--start');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.detail).toContain(why);
  });

  test.each([
    ['2028-02-29T23:59:59.999Z', Date.UTC(2028, 1, 29, 23, 59, 59, 999)],
    ['2028-02-29', Date.UTC(2028, 1, 29)],
    ['2028-02-28T23:59:59+01:00', Date.UTC(2028, 1, 28, 22, 59, 59)],
    ['1835395199999', 1835395199999],
    [1835395199999, 1835395199999],
  ])('a real instant %s still parses', (value, ms) => {
    expect(parseInstant(value, 'to')).toEqual({ ok: true, value: ms });
  });
});

describe('/_sim/clock.set to an impossible date', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await createSimulator({ startMs: Date.UTC(2030, 0, 1), clock: 'manual', seed: 3 });
  });
  afterAll(async () => {
    await sim.close();
  });

  test('answers 400 and leaves the clock where it was', async () => {
    const before = sim.clock.now();
    const answer = await postJson(sim.url, '/_sim/clock.set', { to: '2030-02-30T00:00:00Z' }, sim.rootKey);
    expectV2Error(answer, 400, 'application/invalid_input');
    expect(answer.text).toContain('day 30 does not exist in 2030-02');
    expect(sim.clock.now()).toBe(before);
  });
});
