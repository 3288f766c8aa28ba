/**
 * The sliding-window algorithm of docs/service-model.md#the-sliding-window, on its own: two epoch-aligned fixed windows,
 * `used = current + floor(previous · (1 − elapsed))`, deny when `used + cost > limit`.
 */
import { describe, expect, it } from 'vitest';
import { type WindowCheck, commitWindow, decideWindows, fitsWindow, readWindow, windowCounterKey } from '../../src/engine/ratelimit-window.js';
import type { WindowCounter } from '../../src/engine/state.js';

const MINUTE = 60_000;
/** The start of a 60 s window (and of a 1 s window): 2027-01-15T12:00:00Z. */
const T = Date.UTC(2027, 0, 15, 12);
const KEY = windowCounterKey('ns:test', 'user', MINUTE);

type Counters = Map<string, WindowCounter>;

function snapshot(counters: Counters): Array<[string, WindowCounter]> {
  return [...counters.entries()].map(([k, v]) => [k, { ...v }]);
}

/** One request against one counter, as ratelimit.limit makes it. */
function take(counters: Counters, nowMs: number, cost: number, limit = 10, durationMs = MINUTE, key = windowCounterKey('ns:test', 'user', durationMs)) {
  const { passed, decisions } = decideWindows(counters, [{ key, limit, durationMs, cost }], nowMs);
  const decision = decisions[0];
  if (decision === undefined) throw new Error('decideWindows returned no decision');
  return { passed, remaining: decision.remaining, reset: decision.view.resetAtMs, used: decision.view.used, exceeded: decision.exceeded };
}

describe('worked numbers: limit 10, duration 60 000 ms', () => {
  it('fills the current window one request at a time, then denies', () => {
    const counters: Counters = new Map();
    const remainings: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = take(counters, T + i * 1_000, 1);
      expect(r.passed).toBe(true);
      remainings.push(r.remaining);
    }
    expect(remainings).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(take(counters, T + 59_999, 1)).toMatchObject({ passed: false, remaining: 0, exceeded: true, used: 10 });
    expect(counters.get(KEY)).toEqual({ window: T / MINUTE, current: 10, previous: 0 });
  });

  it('25 % into the next window the previous window weighs floor(10 · 0.75) = 7', () => {
    const counters: Counters = new Map();
    expect(take(counters, T, 10).passed).toBe(true);
    const at25 = T + MINUTE + 15_000;
    expect(readWindow(counters, KEY, at25, MINUTE)).toMatchObject({ current: 0, previous: 10, used: 7, window: T / MINUTE + 1 });
    // 7 used: three more requests fit (remaining 2, 1, 0), the fourth does not.
    expect(take(counters, at25, 1)).toMatchObject({ passed: true, remaining: 2 });
    expect(take(counters, at25, 1)).toMatchObject({ passed: true, remaining: 1 });
    expect(take(counters, at25, 1)).toMatchObject({ passed: true, remaining: 0 });
    expect(take(counters, at25, 1)).toMatchObject({ passed: false, remaining: 0 });

    // 50 %: used = 3 + floor(10 · 0.5) = 8; cost 3 would make 11, cost 2 makes exactly 10.
    const at50 = T + MINUTE + 30_000;
    expect(readWindow(counters, KEY, at50, MINUTE).used).toBe(8);
    expect(take(counters, at50, 3)).toMatchObject({ passed: false, remaining: 0 });
    expect(take(counters, at50, 2)).toMatchObject({ passed: true, remaining: 0 });

    // One third into the window after: previous = 5, used = floor(5 · 2/3) = 3.
    const atThird = T + 2 * MINUTE + 20_000;
    expect(readWindow(counters, KEY, atThird, MINUTE)).toMatchObject({ current: 0, previous: 5, used: 3 });
    expect(take(counters, atThird, 7)).toMatchObject({ passed: true, remaining: 0 });
    expect(take(counters, atThird, 1).passed).toBe(false);
  });

  it('at the exact window boundary the previous window counts in full; a window later it is gone', () => {
    const counters: Counters = new Map();
    take(counters, T + 10_000, 6);
    // 1 ms before the end: only the current window (the previous one is empty).
    expect(readWindow(counters, KEY, T + MINUTE - 1, MINUTE)).toMatchObject({ current: 6, previous: 0, used: 6 });
    // At the boundary: elapsed 0, used = floor(6 · 1) = 6.
    expect(readWindow(counters, KEY, T + MINUTE, MINUTE)).toMatchObject({ current: 0, previous: 6, used: 6 });
    // 1 ms after: floor(6 · (1 − 1/60000)) = 5.
    expect(readWindow(counters, KEY, T + MINUTE + 1, MINUTE)).toMatchObject({ current: 0, previous: 6, used: 5 });
    // Last ms of the next window: floor(6 · 1/60000) = 0.
    expect(readWindow(counters, KEY, T + 2 * MINUTE - 1, MINUTE).used).toBe(0);
    // Two windows later nothing is left, even though the stored counter was never touched.
    expect(readWindow(counters, KEY, T + 2 * MINUTE, MINUTE)).toMatchObject({ current: 0, previous: 0, used: 0 });
    expect(take(counters, T + 5 * MINUTE + 123, 10)).toMatchObject({ passed: true, remaining: 0 });
  });

  it('the weighted previous window uses the exact elapsed fraction (floor(5 · 0.2) = 1, 800 ms into a 1 s window)', () => {
    // Spec: elapsed = 800/1000 = 0.8, used = 0 + floor(5 · (1 − 0.8)) = floor(1) = 1.
    const second = 1_000;
    const key = windowCounterKey('ns:test', 'user', second);
    const counters: Counters = new Map();
    expect(take(counters, T, 5, 5, second).passed).toBe(true);
    expect(readWindow(counters, key, T + second + 800, second).used).toBe(1);
    // So with limit 5 only 4 more fit at that instant.
    expect(take(counters, T + second + 800, 4, 5, second)).toMatchObject({ passed: true, remaining: 0 });
    expect(take(counters, T + second + 800, 1, 5, second).passed).toBe(false);
  });
});

describe('reset', () => {
  it.each([
    ['at the start of a window', T, T + MINUTE],
    ['inside a window', T + 12_345, T + MINUTE],
    ['1 ms before the end', T + MINUTE - 1, T + MINUTE],
    ['exactly at the next boundary', T + MINUTE, T + 2 * MINUTE],
  ])('is the end of the current window (%s)', (_, nowMs, expected) => {
    const counters: Counters = new Map();
    expect(readWindow(counters, KEY, nowMs, MINUTE).resetAtMs).toBe(expected);
    expect(take(counters, nowMs, 1).reset).toBe(expected);
    // A denial reports the same reset.
    take(counters, nowMs, 9);
    expect(take(counters, nowMs, 1)).toMatchObject({ passed: false, reset: expected });
  });

  it('follows the duration: a 1 s window ends at the next whole second', () => {
    expect(readWindow(new Map(), 'k', T + 1_500, 1_000).resetAtMs).toBe(T + 2_000);
    expect(readWindow(new Map(), 'k', T + 1_500, 7_000).resetAtMs).toBe((Math.floor((T + 1_500) / 7_000) + 1) * 7_000);
  });
});

describe('cost 0', () => {
  it('never fails and never consumes, even on a full window', () => {
    const counters: Counters = new Map();
    expect(take(counters, T, 0)).toMatchObject({ passed: true, remaining: 10 });
    expect(counters.size).toBe(0);
    take(counters, T, 10);
    const before = snapshot(counters);
    expect(take(counters, T + 1, 0)).toMatchObject({ passed: true, remaining: 0, exceeded: false });
    expect(snapshot(counters)).toEqual(before);
  });

  it('fits even when the window is already over the limit', () => {
    expect(fitsWindow(100, 0, 1)).toBe(true);
    expect(fitsWindow(0, 0, 0)).toBe(true);
  });

  it('commitWindow with cost 0 writes nothing', () => {
    const counters: Counters = new Map();
    commitWindow(counters, readWindow(counters, KEY, T, MINUTE), 0);
    expect(counters.size).toBe(0);
  });
});

describe('fitsWindow', () => {
  it('allows used + cost up to the limit, not beyond', () => {
    expect(fitsWindow(7, 3, 10)).toBe(true);
    expect(fitsWindow(7, 4, 10)).toBe(false);
    expect(fitsWindow(0, 1, 0)).toBe(false);
    expect(fitsWindow(0, 11, 10)).toBe(false);
    expect(fitsWindow(0, 10, 10)).toBe(true);
  });
});

describe('a denial consumes nothing', () => {
  it('leaves the counter as it was, so a smaller request still fits', () => {
    const counters: Counters = new Map();
    take(counters, T, 8);
    const before = snapshot(counters);
    expect(take(counters, T + 1, 3)).toMatchObject({ passed: false, remaining: 0 });
    expect(snapshot(counters)).toEqual(before);
    expect(take(counters, T + 2, 2)).toMatchObject({ passed: true, remaining: 0 });
  });

  it('does not roll the stored window forward when denied in a later window', () => {
    const counters: Counters = new Map();
    take(counters, T, 10);
    const before = snapshot(counters);
    // In the next window at 10 %: used = floor(10 · 0.9) = 9; cost 2 is denied.
    expect(take(counters, T + MINUTE + 6_000, 2).passed).toBe(false);
    expect(snapshot(counters)).toEqual(before);
  });
});

describe('commitWindow', () => {
  it('rolls the current window into previous when a new window starts', () => {
    const counters: Counters = new Map();
    commitWindow(counters, readWindow(counters, KEY, T, MINUTE), 4);
    expect(counters.get(KEY)).toEqual({ window: T / MINUTE, current: 4, previous: 0 });
    commitWindow(counters, readWindow(counters, KEY, T + MINUTE + 5, MINUTE), 2);
    expect(counters.get(KEY)).toEqual({ window: T / MINUTE + 1, current: 2, previous: 4 });
    // Skipping a whole window drops both.
    commitWindow(counters, readWindow(counters, KEY, T + 3 * MINUTE, MINUTE), 1);
    expect(counters.get(KEY)).toEqual({ window: T / MINUTE + 3, current: 1, previous: 0 });
  });
});

describe('decideWindows', () => {
  it('is all or nothing: one exceeded check means no check consumes', () => {
    const counters: Counters = new Map();
    const a = windowCounterKey('ns:a', 'u', MINUTE);
    const b = windowCounterKey('ns:b', 'u', MINUTE);
    decideWindows(counters, [{ key: b, limit: 2, durationMs: MINUTE, cost: 2 }], T);
    const before = snapshot(counters);
    const checks: WindowCheck[] = [
      { key: a, limit: 5, durationMs: MINUTE, cost: 1 },
      { key: b, limit: 2, durationMs: MINUTE, cost: 1 },
    ];
    const { passed, decisions } = decideWindows(counters, checks, T + 1);
    expect(passed).toBe(false);
    expect(decisions.map((d) => d.exceeded)).toEqual([false, true]);
    // The check that alone would pass reports what is still left, the exceeded one 0.
    expect(decisions.map((d) => d.remaining)).toEqual([5, 0]);
    expect(snapshot(counters)).toEqual(before);
    expect(counters.has(a)).toBe(false);
  });

  it('commits every check when all pass', () => {
    const counters: Counters = new Map();
    const a = windowCounterKey('ns:a', 'u', MINUTE);
    const b = windowCounterKey('ns:b', 'u', 1_000);
    const { passed, decisions } = decideWindows(
      counters,
      [
        { key: a, limit: 5, durationMs: MINUTE, cost: 2 },
        { key: b, limit: 3, durationMs: 1_000, cost: 3 },
      ],
      T,
    );
    expect(passed).toBe(true);
    expect(decisions.map((d) => d.remaining)).toEqual([3, 0]);
    expect(counters.get(a)).toMatchObject({ current: 2 });
    expect(counters.get(b)).toMatchObject({ current: 3, window: T / 1_000 });
  });

  it('checks that share a counter see each other\u2019s cost, in order', () => {
    const counters: Counters = new Map();
    const check = (cost: number): WindowCheck => ({ key: KEY, limit: 5, durationMs: MINUTE, cost });
    const first = decideWindows(counters, [check(2), check(2)], T);
    expect(first.passed).toBe(true);
    expect(first.decisions.map((d) => d.remaining)).toEqual([3, 1]);
    expect(counters.get(KEY)).toMatchObject({ current: 4 });

    // 4 used: 1 + 1 fit together, then nothing is left.
    const second = decideWindows(counters, [check(1), check(1)], T + 1);
    expect(second.passed).toBe(false);
    expect(second.decisions.map((d) => d.exceeded)).toEqual([false, true]);
    expect(counters.get(KEY)).toMatchObject({ current: 4 });
    expect(decideWindows(counters, [check(1)], T + 2).passed).toBe(true);
    expect(counters.get(KEY)).toMatchObject({ current: 5 });
  });

  it('each of two shared checks alone would fit, together they do not: none consumes', () => {
    const counters: Counters = new Map();
    const check = (cost: number): WindowCheck => ({ key: KEY, limit: 5, durationMs: MINUTE, cost });
    const result = decideWindows(counters, [check(3), check(3)], T);
    expect(result.passed).toBe(false);
    expect(result.decisions.map((d) => d.exceeded)).toEqual([false, true]);
    expect(counters.size).toBe(0);
  });

  it('keeps counters of different durations apart', () => {
    const counters: Counters = new Map();
    const short = windowCounterKey('ns:test', 'user', 1_000);
    expect(short).not.toBe(KEY);
    decideWindows(counters, [{ key: KEY, limit: 1, durationMs: MINUTE, cost: 1 }], T);
    expect(decideWindows(counters, [{ key: short, limit: 1, durationMs: 1_000, cost: 1 }], T).passed).toBe(true);
    expect(decideWindows(counters, [{ key: KEY, limit: 1, durationMs: MINUTE, cost: 1 }], T).passed).toBe(false);
  });
});
