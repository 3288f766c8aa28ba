import { describe, expect, it } from 'vitest';
import { ClockMoveError, ManualClock, SystemClock } from '../../src/engine/index.js';

describe('ManualClock', () => {
  it('is frozen until moved, and moves only forward', () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    expect(clock.now()).toBe(1_000);
    expect(clock.advance(500)).toBe(1_500);
    expect(clock.set(2_000)).toBe(2_000);
    expect(clock.set(2_000)).toBe(2_000);
    expect(() => clock.advance(-1)).toThrow(ClockMoveError);
    expect(() => clock.advance(0.5)).toThrow(ClockMoveError);
    expect(clock.now()).toBe(2_000);
  });

  it('clock.set to a past instant throws instead of answering { ok: false } (a test must not carry on at the wrong time)', () => {
    const clock = new ManualClock(Date.parse('2028-03-01T00:00:00.000Z'));
    expect(() => clock.set(Date.parse('2028-02-29T00:00:00.000Z'))).toThrow(
      'cannot set the clock back: 2028-02-29T00:00:00.000Z (1835395200000) is before now 2028-03-01T00:00:00.000Z (1835481600000)',
    );
    expect(() => clock.set(Date.parse('2028-02-29T00:00:00.000Z'))).toThrow(ClockMoveError);
    expect(clock.now()).toBe(Date.parse('2028-03-01T00:00:00.000Z'));
  });

  it('goes back to its start only on resetToStart', () => {
    const clock = new ManualClock(10);
    clock.advance(90);
    clock.resetToStart();
    expect(clock.now()).toBe(10);
  });

  it('refuses a start before the epoch or a fractional one', () => {
    expect(() => new ManualClock(-1)).toThrow(RangeError);
    expect(() => new ManualClock(1.5)).toThrow(RangeError);
  });
});

describe('SystemClock', () => {
  it('follows real time plus an offset and travels forward', () => {
    let real = 5_000;
    const clock = new SystemClock(() => real, 100_000);
    expect(clock.now()).toBe(100_000);
    real += 250;
    expect(clock.now()).toBe(100_250);
    expect(clock.advance(86_400_000)).toBe(86_500_250);
    real += 10;
    expect(clock.now()).toBe(86_500_260);
    expect(() => clock.set(0)).toThrow(/cannot set the clock back: 1970-01-01T00:00:00.000Z \(0\) is before now/);
  });

  it('never runs backwards when the real clock is stepped back', () => {
    let real = 10_000;
    const clock = new SystemClock(() => real);
    expect(clock.now()).toBe(10_000);
    real = 9_000;
    expect(clock.now()).toBe(10_000);
    real = 10_500;
    expect(clock.now()).toBe(10_500);
  });

  it('resetToStart restores the start offset', () => {
    let real = 0;
    const clock = new SystemClock(() => real, 1_000_000);
    clock.advance(5_000);
    clock.resetToStart();
    real = 7;
    expect(clock.now()).toBe(1_000_007);
  });

  it('holding: every reading inside a call is the one instant it started at, however real time moves', () => {
    let real = 1_000;
    const clock = new SystemClock(() => (real += 3), 50_000);
    const seen = clock.holding((nowMs) => [nowMs, clock.now(), clock.now(), clock.holding((inner) => inner)]);
    expect(new Set(seen).size).toBe(1);
    // Outside a call the clock runs again, and never behind the held instant.
    expect(clock.now()).toBeGreaterThan(seen[0] as number);
  });

  it('holding: a move inside a call is seen by the rest of the call and after it', () => {
    let real = 0;
    const clock = new SystemClock(() => (real += 5), 1_000_000);
    clock.holding((nowMs) => {
      expect(clock.advance(60_000)).toBe(nowMs + 60_000);
      expect(clock.now()).toBe(nowMs + 60_000);
      expect(() => clock.set(nowMs + 59_999)).toThrow(ClockMoveError);
    });
    const after = clock.now();
    clock.holding((nowMs) => expect(nowMs).toBe(after + 5));
  });
});
