/**
 * The rate-limit property of docs/service-model.md#the-sliding-window: for any sequence of requests and clock steps, the
 * cost admitted inside any window-aligned interval never exceeds the effective limit, and cost 0
 * is never denied. Checked for ratelimit.limit (with and without an override) and for the key-
 * and identity-level limits of keys.verifyKey (identity limits shared by the identity's keys).
 *
 * Each property records every admitted request itself and sums the admitted cost per counter and
 * per window index floor(t / duration). A second property per operation compares every decision
 * with the sliding-window formula evaluated exactly (integers, no floating point).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Engine, ManualClock } from '../../src/engine/index.js';
import { makeEngine, unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';

// ── shared model ───────────────────────────────────────────────────────────────────────────

interface Admitted {
  atMs: number;
  cost: number;
  /** The effective limit the request was admitted under. */
  limit: number;
}

/** Admitted requests per counter (a counter has one window length), in order. */
class AdmissionLog {
  readonly #counters = new Map<string, { durationMs: number; admitted: Admitted[] }>();

  counter(name: string, durationMs: number) {
    let c = this.#counters.get(name);
    if (c === undefined) {
      c = { durationMs, admitted: [] };
      this.#counters.set(name, c);
    }
    if (c.durationMs !== durationMs) throw new Error(`test bug: counter ${name} used with two durations`);
    return c;
  }

  admit(name: string, limit: number, durationMs: number, atMs: number, cost: number): void {
    this.counter(name, durationMs).admitted.push({ atMs, cost, limit });
  }

  /**
   * The spec's weighted use at `nowMs`, exactly: current + floor(previous · (1 − elapsed)) with
   * elapsed = (now − window·duration) / duration, evaluated as integers.
   */
  usedAt(name: string, durationMs: number, nowMs: number): number {
    const { admitted } = this.counter(name, durationMs);
    const window = Math.floor(nowMs / durationMs);
    let current = 0;
    let previous = 0;
    for (const a of admitted) {
      const w = Math.floor(a.atMs / durationMs);
      if (w === window) current += a.cost;
      else if (w === window - 1) previous += a.cost;
    }
    const intoWindowMs = nowMs - window * durationMs;
    return current + Math.floor((previous * (durationMs - intoWindowMs)) / durationMs);
  }

  /**
   * Every window-aligned interval [w·duration, (w+1)·duration) of every counter in which the
   * admitted cost exceeds the limit. With a constant limit this is the window's total; when a
   * client lowers its limit, each request of cost ≥ 1 admitted under limit L must leave the
   * window's running total (itself included) at most L.
   */
  violations(): string[] {
    const out: string[] = [];
    for (const [name, { durationMs, admitted }] of this.#counters) {
      const perWindow = new Map<number, number>();
      for (const a of admitted) {
        const w = Math.floor(a.atMs / durationMs);
        const sum = (perWindow.get(w) ?? 0) + a.cost;
        perWindow.set(w, sum);
        // Cost 0 is admitted whatever the total (it adds nothing), so it bounds nothing.
        if (a.cost > 0 && sum > a.limit)
          out.push(`${name}: window ${w} (${w * durationMs}..${(w + 1) * durationMs} ms) admitted ${sum} > limit ${a.limit} at ${a.atMs}`);
      }
    }
    return out;
  }
}

/** A clock step: by an amount, or to a window boundary of one of the durations ± 1 ms. */
type ClockStep = { kind: 'advance'; byMs: number } | { kind: 'boundary'; durationIndex: number; skip: number; offsetMs: -1 | 0 | 1 };

function clockStepArb(durations: readonly number[]): fc.Arbitrary<ClockStep> {
  const longest = Math.max(...durations);
  return fc.oneof(
    fc.record({ kind: fc.constant('advance' as const), byMs: fc.oneof(fc.integer({ min: 0, max: 2 * longest }), fc.integer({ min: 0, max: 1_500 })) }),
    fc.record({
      kind: fc.constant('boundary' as const),
      durationIndex: fc.nat({ max: durations.length - 1 }),
      skip: fc.nat({ max: 1 }),
      offsetMs: fc.constantFrom<-1 | 0 | 1>(-1, 0, 1),
    }),
  );
}

function applyClockStep(clock: ManualClock, durations: readonly number[], step: ClockStep): void {
  if (step.kind === 'advance') {
    clock.advance(step.byMs);
    return;
  }
  const d = durations[step.durationIndex] ?? durations[0] ?? 1_000;
  const now = clock.now();
  let target = (Math.floor(now / d) + 1 + step.skip) * d + step.offsetMs;
  while (target < now) target += d;
  clock.set(target);
}

const DURATIONS = [1_000, 3_000, 60_000] as const;

// ── ratelimit.limit ────────────────────────────────────────────────────────────────────────

const IDENTIFIERS = ['a', 'b', 'u_1'] as const;
type Identifier = (typeof IDENTIFIERS)[number];

interface LimitScenario {
  limit: number;
  durationMs: number;
  /** Whether a request may send a lower limit than `limit` (as a client changing its mind). */
  varyLimit: boolean;
  override: { identifier: 'a' | 'u_*' | '*'; limit: number; durationMs: number } | undefined;
  steps: Array<{ kind: 'limit'; identifier: Identifier; cost: number; lowerLimitBy: number } | ClockStep>;
}

const limitScenarioArb: fc.Arbitrary<LimitScenario> = fc
  .record({
    limit: fc.integer({ min: 1, max: 6 }),
    durationMs: fc.constantFrom(...DURATIONS),
    varyLimit: fc.boolean(),
    override: fc.option(
      fc.record({
        identifier: fc.constantFrom<'a' | 'u_*' | '*'>('a', 'u_*', '*'),
        limit: fc.integer({ min: 0, max: 6 }),
        durationMs: fc.constantFrom(1_000, 2_000, 60_000),
      }),
      { nil: undefined },
    ),
  })
  .chain((cfg) => {
    const durations = cfg.override === undefined ? [cfg.durationMs] : [cfg.durationMs, cfg.override.durationMs];
    const request = fc.record({
      kind: fc.constant('limit' as const),
      identifier: fc.constantFrom(...IDENTIFIERS),
      cost: fc.integer({ min: 0, max: 5 }),
      lowerLimitBy: cfg.varyLimit ? fc.nat({ max: cfg.limit - 1 }) : fc.constant(0),
    });
    return fc
      .array(fc.oneof({ arbitrary: request, weight: 3 }, { arbitrary: clockStepArb(durations), weight: 1 }), { minLength: 1, maxLength: 60 })
      .map((steps): LimitScenario => ({ ...cfg, steps }));
  });

function overrideMatches(pattern: 'a' | 'u_*' | '*', identifier: Identifier): boolean {
  if (pattern === '*') return true;
  if (pattern === 'u_*') return identifier.startsWith('u_');
  return identifier === pattern;
}

function runLimitScenario(s: LimitScenario, exactModel: boolean): void {
  const { engine, clock, rootKey, workspaceId } = makeEngine();
  unwrap(engine.admin.createNamespace(workspaceId, 'ns'));
  let overrideId: string | undefined;
  if (s.override !== undefined) {
    overrideId = unwrap(
      engine.ratelimit.setOverride(rootKey, { namespace: 'ns', identifier: s.override.identifier, limit: s.override.limit, duration: s.override.durationMs }),
    ).overrideId;
  }
  const durations = s.override === undefined ? [s.durationMs] : [s.durationMs, s.override.durationMs];
  const log = new AdmissionLog();
  for (const step of s.steps) {
    if (step.kind !== 'limit') {
      applyClockStep(clock, durations, step);
      continue;
    }
    const requestLimit = s.limit - step.lowerLimitBy;
    const matched = s.override !== undefined && overrideMatches(s.override.identifier, step.identifier);
    const limit = matched && s.override !== undefined ? s.override.limit : requestLimit;
    const durationMs = matched && s.override !== undefined ? s.override.durationMs : s.durationMs;
    const now = clock.now();
    const usedBefore = log.usedAt(step.identifier, durationMs, now);
    const out = unwrap(
      engine.ratelimit.limit(rootKey, { namespace: 'ns', identifier: step.identifier, limit: requestLimit, duration: s.durationMs, cost: step.cost }),
    );

    if (step.cost === 0) expect(out.success, 'cost 0 is never denied').toBe(true);
    expect(out.limit).toBe(limit);
    expect(out.reset).toBe((Math.floor(now / durationMs) + 1) * durationMs);
    if (matched) expect(out.overrideId).toBe(overrideId);
    else expect(out).not.toHaveProperty('overrideId');
    expect(out.remaining).toBeGreaterThanOrEqual(0);
    expect(out.remaining).toBeLessThanOrEqual(limit);
    if (!out.success) expect(out.remaining).toBe(0);
    if (exactModel) {
      const fits = step.cost === 0 || usedBefore + step.cost <= limit;
      expect(out.success, `at ${now}: used ${usedBefore} + cost ${step.cost} vs limit ${limit}`).toBe(fits);
      if (fits) expect(out.remaining).toBe(Math.max(0, limit - usedBefore - step.cost));
    }
    if (out.success) log.admit(step.identifier, limit, durationMs, now, step.cost);
  }
  expect(log.violations()).toEqual([]);
}

describe('ratelimit.limit: admitted cost per window never exceeds the effective limit', () => {
  it('holds for any requests and clock steps, with and without an override; cost 0 is never denied', () => {
    assertProperty(
      fc.property(limitScenarioArb, (s) => runLimitScenario(s, false)),
      { numRuns: 200 },
    );
  });

  it('every decision is the sliding-window formula evaluated exactly', () => {
    assertProperty(
      fc.property(limitScenarioArb, (s) => runLimitScenario(s, true)),
      { numRuns: 200 },
    );
  });
});

// ── keys.verifyKey with key- and identity-level limits ─────────────────────────────────────

const NAMED = ['idNamed', 'idAuto', 'keyAuto', 'inline'] as const;
type NamedLimit = (typeof NAMED)[number];

interface LimitConfig {
  limit: number;
  durationMs: number;
}

interface VerifyScenario {
  idAuto: LimitConfig;
  idNamed: LimitConfig;
  inline: LimitConfig;
  keys: Array<{ credits: number | undefined; keyAuto: LimitConfig & { autoApply: boolean }; shadow: LimitConfig | undefined }>;
  steps: Array<{ kind: 'verify'; keyIndex: number; creditCost: number | undefined; named: Array<{ name: NamedLimit; cost: number | undefined }> } | ClockStep>;
}

const limitConfigArb = (max: number): fc.Arbitrary<LimitConfig> => fc.record({ limit: fc.integer({ min: 1, max }), durationMs: fc.constantFrom(...DURATIONS) });

const verifyScenarioArb: fc.Arbitrary<VerifyScenario> = fc
  .record({
    idAuto: limitConfigArb(5),
    idNamed: limitConfigArb(6),
    inline: limitConfigArb(5),
    keys: fc.array(
      fc.record({
        credits: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
        keyAuto: fc.record({ limit: fc.integer({ min: 1, max: 4 }), durationMs: fc.constantFrom(...DURATIONS), autoApply: fc.boolean() }),
        // The key's own "idNamed", which wins over the identity's.
        shadow: fc.option(limitConfigArb(3), { nil: undefined, freq: 3 }),
      }),
      { minLength: 2, maxLength: 2 },
    ),
  })
  .chain((cfg) => {
    const durations = [cfg.idAuto.durationMs, cfg.idNamed.durationMs, cfg.inline.durationMs, ...cfg.keys.map((k) => k.keyAuto.durationMs)];
    const verify = fc.record({
      kind: fc.constant('verify' as const),
      keyIndex: fc.nat({ max: 1 }),
      creditCost: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      named: fc.uniqueArray(fc.record({ name: fc.constantFrom(...NAMED), cost: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }) }), {
        maxLength: 4,
        selector: (r) => r.name,
      }),
    });
    return fc
      .array(fc.oneof({ arbitrary: verify, weight: 3 }, { arbitrary: clockStepArb(durations), weight: 1 }), { minLength: 1, maxLength: 50 })
      .map((steps): VerifyScenario => ({ ...cfg, steps }));
  });

interface PlannedLimit {
  counter: string;
  name: string;
  limit: number;
  durationMs: number;
  cost: number;
}

function setupVerify(s: VerifyScenario): { engine: Engine; clock: ManualClock; keys: string[] } {
  const { engine, clock, rootKey, apiId } = makeEngine();
  unwrap(
    engine.identities.createIdentity(rootKey, {
      externalId: 'owner',
      ratelimits: [
        { name: 'idAuto', limit: s.idAuto.limit, duration: s.idAuto.durationMs, autoApply: true },
        { name: 'idNamed', limit: s.idNamed.limit, duration: s.idNamed.durationMs },
      ],
    }),
  );
  const keys = s.keys.map((k) => {
    const ratelimits = [{ name: 'keyAuto', limit: k.keyAuto.limit, duration: k.keyAuto.durationMs, autoApply: k.keyAuto.autoApply }];
    if (k.shadow !== undefined) ratelimits.push({ name: 'idNamed', limit: k.shadow.limit, duration: k.shadow.durationMs, autoApply: false });
    return unwrap(
      engine.keys.createKey(rootKey, {
        apiId,
        externalId: 'owner',
        ratelimits,
        ...(k.credits === undefined ? {} : { credits: { remaining: k.credits } }),
      }),
    ).key;
  });
  return { engine, clock, keys };
}

/** The limits a verification checks (docs/service-model.md#rate-limits-in-a-verification), with the counter each one uses. */
function planFor(s: VerifyScenario, keyIndex: number, named: ReadonlyArray<{ name: NamedLimit; cost: number | undefined }>): PlannedLimit[] {
  const key = s.keys[keyIndex];
  if (key === undefined) throw new Error('no such key');
  const planned: PlannedLimit[] = [];
  for (const r of named) {
    const cost = r.cost ?? 1;
    if (r.name === 'inline') planned.push({ counter: `key${keyIndex}/inline`, name: 'inline', ...s.inline, cost });
    else if (r.name === 'idAuto') planned.push({ counter: 'identity/idAuto', name: 'idAuto', ...s.idAuto, cost });
    else if (r.name === 'keyAuto')
      planned.push({ counter: `key${keyIndex}/keyAuto`, name: 'keyAuto', limit: key.keyAuto.limit, durationMs: key.keyAuto.durationMs, cost });
    else if (key.shadow !== undefined) planned.push({ counter: `key${keyIndex}/idNamed`, name: 'idNamed', ...key.shadow, cost });
    else planned.push({ counter: 'identity/idNamed', name: 'idNamed', ...s.idNamed, cost });
  }
  const isNamed = (name: string) => named.some((r) => r.name === name);
  if (key.keyAuto.autoApply && !isNamed('keyAuto')) {
    planned.push({ counter: `key${keyIndex}/keyAuto`, name: 'keyAuto', limit: key.keyAuto.limit, durationMs: key.keyAuto.durationMs, cost: 1 });
  }
  if (!isNamed('idAuto')) planned.push({ counter: 'identity/idAuto', name: 'idAuto', ...s.idAuto, cost: 1 });
  return planned;
}

function runVerifyScenario(s: VerifyScenario, exactModel: boolean): void {
  const { engine, clock, keys } = setupVerify(s);
  const durations = [s.idAuto.durationMs, s.idNamed.durationMs, s.inline.durationMs, ...s.keys.map((k) => k.keyAuto.durationMs)];
  const balances = s.keys.map((k) => k.credits);
  const log = new AdmissionLog();
  for (const step of s.steps) {
    if (step.kind !== 'verify') {
      applyClockStep(clock, durations, step);
      continue;
    }
    const key = keys[step.keyIndex];
    if (key === undefined) throw new Error('no such key');
    const planned = planFor(s, step.keyIndex, step.named);
    const now = clock.now();
    const usedBefore = planned.map((p) => log.usedAt(p.counter, p.durationMs, now));
    const out = unwrap(
      engine.keys.verifyKey(undefined, {
        key,
        ...(step.creditCost === undefined ? {} : { credits: { cost: step.creditCost } }),
        ratelimits: step.named.map((r) => ({
          name: r.name,
          ...(r.cost === undefined ? {} : { cost: r.cost }),
          ...(r.name === 'inline' ? { limit: s.inline.limit, duration: s.inline.durationMs } : {}),
        })),
      }),
    );

    expect(['VALID', 'RATE_LIMITED', 'USAGE_EXCEEDED']).toContain(out.code);
    expect(out.valid).toBe(out.code === 'VALID');
    // The limits reported are the ones the verification checks, with their effective limits.
    const reported = (out.ratelimits ?? []).map((r) => `${r.name}:${r.limit}:${r.duration}`).sort();
    expect(reported).toEqual(planned.map((p) => `${p.name}:${p.limit}:${p.durationMs}`).sort());

    // Credits: a rate-limited verification consumes none; otherwise cost ≤ balance passes and is deducted.
    const balance = balances[step.keyIndex];
    const creditCost = step.creditCost ?? 1;
    if (balance === undefined) {
      expect(out).not.toHaveProperty('credits');
      if (out.code !== 'RATE_LIMITED') expect(out.code).toBe('VALID');
    } else {
      if (out.code === 'USAGE_EXCEEDED') expect(creditCost).toBeGreaterThan(balance);
      if (out.code === 'VALID') {
        expect(creditCost).toBeLessThanOrEqual(balance);
        balances[step.keyIndex] = balance - creditCost;
      }
      if (out.code !== 'RATE_LIMITED') expect(out.code).toBe(creditCost > balance ? 'USAGE_EXCEEDED' : 'VALID');
      expect(out.credits).toBe(balances[step.keyIndex]);
    }

    if (exactModel) {
      const limited = planned.some((p, i) => p.cost > 0 && (usedBefore[i] ?? 0) + p.cost > p.limit);
      expect(out.code === 'RATE_LIMITED', `at ${now}: ${planned.map((p, i) => `${p.counter} used ${usedBefore[i]} + ${p.cost} / ${p.limit}`).join(', ')}`).toBe(
        limited,
      );
    }
    // VALID and USAGE_EXCEEDED both consumed their rate-limit tokens; RATE_LIMITED consumed none.
    if (out.code !== 'RATE_LIMITED') for (const p of planned) log.admit(p.counter, p.limit, p.durationMs, now, p.cost);
  }
  expect(log.violations()).toEqual([]);
}

describe('keys.verifyKey: admitted cost per window never exceeds key and identity limits', () => {
  it('holds for key limits, identity limits shared across keys, named limits with cost and inline limits', () => {
    assertProperty(
      fc.property(verifyScenarioArb, (s) => runVerifyScenario(s, false)),
      { numRuns: 200 },
    );
  });

  it('every rate-limit decision is the sliding-window formula evaluated exactly', () => {
    assertProperty(
      fc.property(verifyScenarioArb, (s) => runVerifyScenario(s, true)),
      { numRuns: 200 },
    );
  });
});
