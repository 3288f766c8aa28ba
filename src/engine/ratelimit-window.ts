/**
 * The production sliding-window rate limit (docs/service-model.md#the-sliding-window), built from two fixed windows
 * aligned to the Unix epoch:
 *
 *   window  = floor(now / duration)
 *   elapsed = (now − window·duration) / duration          (0 ≤ elapsed < 1)
 *   used    = current + floor(previous · (1 − elapsed))
 *
 * A request of `cost` is denied when cost > 0 and used + cost > limit; otherwise `cost` is added
 * to `current`. So the cost admitted inside any one window-aligned interval never exceeds the
 * limit, while the previous window's weight fades out linearly. Cost 0 never fails.
 *
 * Reading is pure; only `commitWindow` writes, so a refused or rejected request changes nothing.
 */
import type { EpochMs } from './clock.js';

/** The shortest and longest window a limit may have, ms (1 s, 30 days). */
export const MIN_LIMIT_DURATION_MS = 1_000;
export const MAX_LIMIT_DURATION_MS = 2_592_000_000;
import type { WindowCounter } from './state.js';

/** The counter as seen at `nowMs`, before this request. */
export interface WindowView {
  key: string;
  window: number;
  current: number;
  previous: number;
  /** Weighted use of the sliding window. */
  used: number;
  /** Unix ms at which the current fixed window ends. */
  resetAtMs: EpochMs;
}

export function windowCounterKey(scope: string, identifier: string, durationMs: number): string {
  return `${scope}\0${identifier}\0${durationMs}`;
}

/**
 * floor(previous · (1 − elapsed)) computed exactly: previous · remainingMs / durationMs in
 * integers. In floating point 5 · (1 − 0.8) is 0.999…, which would floor to 0 and admit one
 * request too many; BigInt takes over where the product would pass 2^53.
 */
function previousWeight(previous: number, remainingMs: number, durationMs: number): number {
  if (previous === 0) return 0;
  const product = previous * remainingMs;
  // `%` is exact on safe integers, and dividing an exact multiple cannot round.
  if (Number.isSafeInteger(product)) return (product - (product % durationMs)) / durationMs;
  return Number((BigInt(previous) * BigInt(remainingMs)) / BigInt(durationMs));
}

/** Reads a counter at `nowMs` without changing it. */
export function readWindow(counters: ReadonlyMap<string, WindowCounter>, key: string, nowMs: EpochMs, durationMs: number): WindowView {
  const window = Math.floor(nowMs / durationMs);
  const stored = counters.get(key);
  let current = 0;
  let previous = 0;
  if (stored !== undefined) {
    if (stored.window === window) {
      current = stored.current;
      previous = stored.previous;
    } else if (stored.window === window - 1) {
      previous = stored.current;
    }
  }
  const used = current + previousWeight(previous, durationMs - (nowMs - window * durationMs), durationMs);
  return { key, window, current, previous, used, resetAtMs: (window + 1) * durationMs };
}

/** Whether `cost` more fits under `limit` given `used` (cost 0 always fits). */
export function fitsWindow(used: number, cost: number, limit: number): boolean {
  return cost === 0 || used + cost <= limit;
}

/** Adds `cost` to the current window of a counter read by `readWindow`. */
export function commitWindow(counters: Map<string, WindowCounter>, view: WindowView, cost: number): void {
  if (cost === 0) return;
  const stored = counters.get(view.key);
  if (stored === undefined) {
    counters.set(view.key, { window: view.window, current: view.current + cost, previous: view.previous });
    return;
  }
  stored.window = view.window;
  stored.current = view.current + cost;
  stored.previous = view.previous;
}

/**
 * Decides several limits together, all or nothing: if any one is exceeded none consumes.
 * Checks that share a counter see each other's cost, in order.
 */
export interface WindowCheck {
  key: string;
  limit: number;
  durationMs: number;
  cost: number;
}

export interface WindowDecision {
  view: WindowView;
  /** This check alone would be exceeded. */
  exceeded: boolean;
  /** What is left after this request (0 when exceeded or when the whole request was refused and it was at 0). */
  remaining: number;
}

export function decideWindows(
  counters: Map<string, WindowCounter>,
  checks: readonly WindowCheck[],
  nowMs: EpochMs,
): { passed: boolean; decisions: WindowDecision[] } {
  if (checks.length === 1) {
    const decision = decideWindow(counters, checks[0] as WindowCheck, nowMs);
    return { passed: !decision.exceeded, decisions: [decision] };
  }
  const pending = new Map<string, number>();
  const views: WindowView[] = [];
  const exceededFlags: boolean[] = [];
  let passed = true;
  for (const check of checks) {
    const view = readWindow(counters, check.key, nowMs, check.durationMs);
    const before = pending.get(check.key) ?? 0;
    const exceeded = !fitsWindow(view.used + before, check.cost, check.limit);
    if (exceeded) passed = false;
    else pending.set(check.key, before + check.cost);
    views.push(view);
    exceededFlags.push(exceeded);
  }
  const decisions: WindowDecision[] = [];
  const committed = new Map<string, number>();
  for (const [i, check] of checks.entries()) {
    const view = views[i] as WindowView;
    const exceeded = exceededFlags[i] ?? false;
    const sharedBefore = committed.get(check.key) ?? 0;
    let remaining: number;
    if (exceeded) {
      remaining = 0;
    } else if (passed) {
      remaining = Math.max(0, check.limit - (view.used + sharedBefore + check.cost));
      committed.set(check.key, sharedBefore + check.cost);
    } else {
      remaining = Math.max(0, check.limit - view.used);
    }
    decisions.push({ view, exceeded, remaining });
  }
  if (passed) {
    // Re-read before each write so that checks sharing a counter accumulate.
    for (const check of checks) commitWindow(counters, readWindow(counters, check.key, nowMs, check.durationMs), check.cost);
  }
  return { passed, decisions };
}

/**
 * `decideWindows` for one check (ratelimit.limit, a verification with one limit, the API rate
 * limit): the same decision — passed when not `exceeded` — without the arrays and the
 * bookkeeping that checks sharing a counter need.
 */
export function decideWindow(counters: Map<string, WindowCounter>, check: WindowCheck, nowMs: EpochMs): WindowDecision {
  const view = readWindow(counters, check.key, nowMs, check.durationMs);
  if (!fitsWindow(view.used, check.cost, check.limit)) return { view, exceeded: true, remaining: 0 };
  // Nothing was written since the read: the view is what a re-read would give.
  commitWindow(counters, view, check.cost);
  return { view, exceeded: false, remaining: Math.max(0, check.limit - (view.used + check.cost)) };
}
