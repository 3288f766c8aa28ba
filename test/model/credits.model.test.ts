/**
 * Model-based test of usage credits with refill (docs/service-model.md#credits and #refill):
 * several keys with credits and refills, driven by createKey, verifyKey(cost), updateCredits,
 * updateKey(credits), getKey and clock moves that land just before, on and just after UTC
 * midnights, month ends and refill instants, all checked against the reference model in
 * test/helpers/credits-model.ts (its own Date.UTC calendar, not the engine's).
 *
 * Invariants checked after every command, on every balance the command observes: balances are
 * never negative; a verification is VALID exactly when cost ≤ balance (or the key is unlimited);
 * cost 0 changes nothing; right after a boundary is crossed the balance is exactly `amount`.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { KeyView, RefillInput, UpdateCreditsInput, CreditsInput } from '../../src/engine/index.js';
import { type EngineFixture, errorCode, makeEngine, unwrap } from '../helpers/engine.js';
import { assertProperty } from '../helpers/property.js';
import {
  DAY_MS,
  type ModelKey,
  type ModelRefill,
  nextBoundaryAfter,
  nextLastDayAfter,
  nextMidnightAfter,
  nextMonthStartAfter,
  settle,
} from '../helpers/credits-model.js';

const INVALID_INPUT = 'err:service:application:invalid_input';
const MAX_KEYS = 6;

interface Model {
  nowMs: number;
  keys: ModelKey[];
}

interface Real {
  fx: EngineFixture;
  handles: Array<{ keyId: string; key: string }>;
}

type KeyCommand = fc.Command<Model, Real>;

/** A refill as the test sends it; `refillDay` omitted means "use the default (1)". */
type RefillSpec = { interval: 'daily'; amount: number } | { interval: 'monthly'; amount: number; refillDay?: number };

function refillInput(spec: RefillSpec): RefillInput {
  if (spec.interval === 'daily') return { interval: 'daily', amount: spec.amount };
  return spec.refillDay === undefined ? { interval: 'monthly', amount: spec.amount } : { interval: 'monthly', amount: spec.amount, refillDay: spec.refillDay };
}

function modelRefill(spec: RefillSpec): ModelRefill {
  return spec.interval === 'daily'
    ? { interval: 'daily', amount: spec.amount, refillDay: 1 }
    : { interval: 'monthly', amount: spec.amount, refillDay: spec.refillDay ?? 1 };
}

function showRefill(spec: RefillSpec): string {
  return spec.interval === 'daily' ? `daily ${spec.amount}` : `monthly ${spec.amount} day ${spec.refillDay ?? 'default'}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A balance the engine reported: never negative, always an integer. */
function expectBalance(balance: number, context: string): void {
  expect(Number.isInteger(balance), `${context}: balance ${balance} is not an integer`).toBe(true);
  expect(balance, `${context}: negative balance`).toBeGreaterThanOrEqual(0);
}

/** Compares getKey's credits view with the (settled) model key. */
function expectView(view: KeyView, mk: ModelKey, context: string): void {
  if (mk.remaining === null && mk.refill === null) {
    expect(view.credits, `${context}: an unlimited key without refill shows no credits`).toBeUndefined();
    return;
  }
  expect(view.credits, `${context}: credits view`).toBeDefined();
  const credits = view.credits;
  if (credits === undefined) return;
  expect(credits.remaining ?? null, `${context}: remaining`).toBe(mk.remaining);
  if (credits.remaining !== null) expectBalance(credits.remaining, context);
  if (mk.refill === null) {
    expect(credits.refill, `${context}: refill`).toBeUndefined();
  } else {
    expect(credits.refill, `${context}: refill`).toBeDefined();
    expect(credits.refill?.interval).toBe(mk.refill.interval);
    expect(credits.refill?.amount).toBe(mk.refill.amount);
    if (mk.refill.interval === 'daily') expect(credits.refill?.refillDay, `${context}: daily refill has no refillDay`).toBeUndefined();
    else expect(credits.refill?.refillDay ?? 1, `${context}: refillDay`).toBe(mk.refill.refillDay);
  }
}

function handleOf(r: Real, i: number): Real['handles'][number] {
  const handle = r.handles[i];
  if (handle === undefined) throw new Error(`no key #${i}`);
  return handle;
}

function getView(r: Real, i: number): KeyView {
  return unwrap(r.fx.engine.keys.getKey(r.fx.rootKey, { keyId: handleOf(r, i).keyId }));
}

function pick(m: Model, index: number): { i: number; mk: ModelKey } {
  const i = index % m.keys.length;
  const mk = m.keys[i];
  if (mk === undefined) throw new Error(`no model key #${i}`);
  return { i, mk };
}

/** The key a command acts on (its index modulo the keys there are), its balance settled to now. */
function pickSettled(m: Model, r: Real, index: number): { i: number; mk: ModelKey; handle: Real['handles'][number] } {
  const { i, mk } = pick(m, index);
  const handle = handleOf(r, i);
  settle(mk, m.nowMs);
  return { i, mk, handle };
}

// ---------------------------------------------------------------------------------------------
// Commands

/** A command on one of the keys created so far: it can run once there is a key. */
abstract class OnAKey {
  constructor(readonly index: number) {}
  check(m: Readonly<Model>): boolean {
    return m.keys.length > 0;
  }
}

type CreateSpec =
  { kind: 'unlimited' } | { kind: 'limited'; remaining: number; refill: RefillSpec | null } | { kind: 'refillWithoutRemaining'; refill: RefillSpec };

class CreateKey implements KeyCommand {
  constructor(readonly spec: CreateSpec) {}
  check(m: Readonly<Model>): boolean {
    return m.keys.length < MAX_KEYS;
  }
  run(m: Model, r: Real): void {
    const { fx } = r;
    const { spec } = this;
    let credits: CreditsInput | undefined;
    if (spec.kind === 'limited')
      credits = spec.refill === null ? { remaining: spec.remaining } : { remaining: spec.remaining, refill: refillInput(spec.refill) };
    if (spec.kind === 'refillWithoutRemaining') credits = { refill: refillInput(spec.refill) };
    const result = fx.engine.keys.createKey(fx.rootKey, credits === undefined ? { apiId: fx.apiId } : { apiId: fx.apiId, credits });
    if (spec.kind === 'refillWithoutRemaining') {
      // credits.refill without credits.remaining → 400 (docs/service-model.md#keys); nothing is created.
      expect(errorCode(result)).toBe(INVALID_INPUT);
      return;
    }
    const created = unwrap(result);
    r.handles.push({ keyId: created.keyId, key: created.key });
    const mk: ModelKey =
      spec.kind === 'unlimited'
        ? { remaining: null, refill: null, anchorMs: m.nowMs }
        : { remaining: spec.remaining, refill: spec.refill === null ? null : modelRefill(spec.refill), anchorMs: m.nowMs };
    m.keys.push(mk);
    expectView(getView(r, r.handles.length - 1), mk, this.toString());
  }
  toString(): string {
    const { spec } = this;
    if (spec.kind === 'unlimited') return 'createKey(unlimited)';
    if (spec.kind === 'refillWithoutRemaining') return `createKey(refill ${showRefill(spec.refill)}, no remaining → 400)`;
    return `createKey(remaining ${spec.remaining}${spec.refill === null ? '' : `, refill ${showRefill(spec.refill)}`})`;
  }
}

class Verify extends OnAKey implements KeyCommand {
  constructor(
    index: number,
    readonly cost: number | undefined,
  ) {
    super(index);
  }
  run(m: Model, r: Real): void {
    const { i, mk, handle } = pickSettled(m, r, this.index);
    const before = mk.remaining;
    const cost = this.cost ?? 1;
    const input = this.cost === undefined ? { key: handle.key } : { key: handle.key, credits: { cost: this.cost } };
    const out = unwrap(r.fx.engine.keys.verifyKey(undefined, input));
    const context = `${this.toString()} at ${iso(m.nowMs)} with balance ${String(before)}`;
    expect(out.keyId, context).toBe(handle.keyId);
    if (before === null) {
      expect(out.code, context).toBe('VALID');
      expect(out.valid, context).toBe(true);
      expect(out.credits, `${context}: an unlimited key reports no credits`).toBeUndefined();
      return;
    }
    // VALID exactly when cost ≤ balance; refused verifications leave the balance as it was.
    const passes = cost <= before;
    expect(out.code, context).toBe(passes ? 'VALID' : 'USAGE_EXCEEDED');
    expect(out.valid, context).toBe(passes);
    const after = passes ? before - cost : before;
    expect(out.credits, context).toBe(after);
    if (out.credits !== undefined) expectBalance(out.credits, context);
    mk.remaining = after;
    if (cost === 0) {
      // Cost 0 changes nothing, also as seen by a later read.
      expect(out.credits, context).toBe(before);
      expect(getView(r, i).credits?.remaining, `${context}: after cost 0`).toBe(before);
    }
  }
  override toString(): string {
    return `verify(#${this.index}, cost ${this.cost === undefined ? 'default' : this.cost})`;
  }
}

type CreditsOp = { op: 'set'; value: number | null } | { op: 'increment' | 'decrement'; value: number };

class UpdateCredits extends OnAKey implements KeyCommand {
  constructor(
    index: number,
    readonly change: CreditsOp,
  ) {
    super(index);
  }
  run(m: Model, r: Real): void {
    const { i, mk, handle } = pickSettled(m, r, this.index);
    const input: UpdateCreditsInput = { keyId: handle.keyId, operation: this.change.op, value: this.change.value };
    const result = r.fx.engine.keys.updateCredits(r.fx.rootKey, input);
    const context = `${this.toString()} at ${iso(m.nowMs)} on balance ${String(mk.remaining)}`;
    if (this.change.op !== 'set' && mk.remaining === null) {
      // increment/decrement on an unlimited key → 400, nothing changes.
      expect(errorCode(result), context).toBe(INVALID_INPUT);
      expectView(getView(r, i), mk, `${context} (after the refused change)`);
      return;
    }
    const out = unwrap(result);
    switch (this.change.op) {
      case 'set':
        if (this.change.value === null) {
          mk.remaining = null;
          mk.refill = null;
        } else {
          mk.remaining = this.change.value;
        }
        break;
      case 'increment':
        mk.remaining = (mk.remaining ?? 0) + this.change.value;
        break;
      case 'decrement':
        mk.remaining = Math.max(0, (mk.remaining ?? 0) - this.change.value);
        break;
    }
    expect(out.remaining, context).toBe(mk.remaining);
    if (out.remaining !== null) expectBalance(out.remaining, context);
    if (mk.refill === null) {
      expect(out.refill, `${context}: refill`).toBeUndefined();
    } else {
      expect(out.refill?.interval, `${context}: refill`).toBe(mk.refill.interval);
      expect(out.refill?.amount, `${context}: refill`).toBe(mk.refill.amount);
    }
  }
  override toString(): string {
    return `updateCredits(#${this.index}, ${this.change.op} ${String(this.change.value)})`;
  }
}

type KeyCreditsChange =
  | { kind: 'null' }
  | { kind: 'remaining'; remaining: number }
  | { kind: 'remainingNull' }
  | { kind: 'refillNull' }
  | { kind: 'remainingAndRefillNull'; remaining: number }
  | { kind: 'refill'; refill: RefillSpec }
  | { kind: 'remainingAndRefill'; remaining: number; refill: RefillSpec };

class UpdateKeyCredits extends OnAKey implements KeyCommand {
  constructor(
    index: number,
    readonly change: KeyCreditsChange,
  ) {
    super(index);
  }
  run(m: Model, r: Real): void {
    const { i, mk, handle } = pickSettled(m, r, this.index);
    const change = this.change;
    let credits: CreditsInput | null;
    switch (change.kind) {
      case 'null':
        credits = null;
        mk.remaining = null;
        mk.refill = null;
        break;
      case 'remaining':
        credits = { remaining: change.remaining };
        mk.remaining = change.remaining;
        break;
      case 'remainingNull':
        credits = { remaining: null };
        mk.remaining = null;
        mk.refill = null;
        break;
      case 'refillNull':
        credits = { refill: null };
        mk.refill = null;
        break;
      case 'remainingAndRefillNull':
        credits = { remaining: change.remaining, refill: null };
        mk.remaining = change.remaining;
        mk.refill = null;
        break;
      case 'refill':
        // Balance untouched; on an unlimited key the first boundary makes it limited at `amount`.
        credits = { refill: refillInput(change.refill) };
        mk.refill = modelRefill(change.refill);
        break;
      case 'remainingAndRefill':
        credits = { remaining: change.remaining, refill: refillInput(change.refill) };
        mk.remaining = change.remaining;
        mk.refill = modelRefill(change.refill);
        break;
    }
    // A refill set now is first applied at the next boundary strictly after now.
    mk.anchorMs = m.nowMs;
    expect(unwrap(r.fx.engine.keys.updateKey(r.fx.rootKey, { keyId: handle.keyId, credits }))).toEqual({});
    expectView(getView(r, i), mk, `${this.toString()} at ${iso(m.nowMs)}`);
  }
  override toString(): string {
    const c = this.change;
    const what =
      c.kind === 'null'
        ? 'credits null'
        : c.kind === 'remaining'
          ? `remaining ${c.remaining}`
          : c.kind === 'remainingNull'
            ? 'remaining null'
            : c.kind === 'refillNull'
              ? 'refill null'
              : c.kind === 'remainingAndRefillNull'
                ? `remaining ${c.remaining}, refill null`
                : c.kind === 'refill'
                  ? `refill ${showRefill(c.refill)}`
                  : `remaining ${c.remaining}, refill ${showRefill(c.refill)}`;
    return `updateKey(#${this.index}, ${what})`;
  }
}

class GetKey extends OnAKey implements KeyCommand {
  run(m: Model, r: Real): void {
    const { i, mk } = pick(m, this.index);
    const refilled = settle(mk, m.nowMs);
    const view = getView(r, i);
    const context = `${this.toString()} at ${iso(m.nowMs)}`;
    expectView(view, mk, context);
    if (refilled && mk.refill !== null) expect(view.credits?.remaining, `${context}: just refilled`).toBe(mk.refill.amount);
  }
  override toString(): string {
    return `getKey(#${this.index})`;
  }
}

type ClockMove =
  | { kind: 'step'; ms: number }
  | { kind: 'jump'; ms: number }
  | { kind: 'midnight'; offset: number }
  | { kind: 'monthStart'; offset: number }
  | { kind: 'lastDay'; offset: number }
  | { kind: 'nextRefill'; index: number; offset: number };

class AdvanceClock implements KeyCommand {
  constructor(
    readonly move: ClockMove,
    /** Read every key right after the move (otherwise they settle lazily, on their next use). */
    readonly inspect: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  target(m: Readonly<Model>): number {
    const move = this.move;
    switch (move.kind) {
      case 'step':
      case 'jump':
        return m.nowMs + move.ms;
      case 'midnight':
        return nextMidnightAfter(m.nowMs) + move.offset;
      case 'monthStart':
        return nextMonthStartAfter(m.nowMs) + move.offset;
      case 'lastDay':
        return nextLastDayAfter(m.nowMs) + move.offset;
      case 'nextRefill': {
        const mk = m.keys.length === 0 ? undefined : m.keys[move.index % m.keys.length];
        const refill = mk === undefined ? null : mk.refill;
        const base = refill === null ? nextMidnightAfter(m.nowMs) : nextBoundaryAfter(m.nowMs, refill);
        return base + move.offset;
      }
    }
  }
  run(m: Model, r: Real): void {
    const toMs = Math.max(m.nowMs, this.target(m));
    expect(r.fx.clock.set(toMs)).toBe(toMs);
    m.nowMs = toMs;
    if (!this.inspect) return;
    for (const [i, mk] of m.keys.entries()) {
      const refilled = settle(mk, m.nowMs);
      const view = getView(r, i);
      const context = `${this.toString()} → ${iso(m.nowMs)}, key #${i}`;
      expectView(view, mk, context);
      // Right after a boundary, and before anything else touches the key: exactly `amount`.
      if (refilled && mk.refill !== null) expect(view.credits?.remaining, `${context}: just refilled`).toBe(mk.refill.amount);
    }
  }
  toString(): string {
    const move = this.move;
    const off = 'offset' in move ? ` ${move.offset >= 0 ? '+' : ''}${move.offset}ms` : '';
    const what =
      move.kind === 'step' || move.kind === 'jump'
        ? `${move.kind} ${move.ms}ms`
        : move.kind === 'nextRefill'
          ? `next refill of #${move.index}${off}`
          : `next ${move.kind}${off}`;
    return `advance(${what}${this.inspect ? ', inspect' : ''})`;
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const amountArb = fc.integer({ min: 1, max: 30 });
const balanceArb = fc.integer({ min: 0, max: 30 });
const indexArb = fc.nat({ max: MAX_KEYS * 2 });
const refillDayArb = fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(28, 29, 30, 31));

const refillArb: fc.Arbitrary<RefillSpec> = fc.oneof(
  amountArb.map((amount): RefillSpec => ({ interval: 'daily', amount })),
  fc
    .tuple(amountArb, fc.option(refillDayArb, { nil: undefined }))
    .map(([amount, refillDay]): RefillSpec => (refillDay === undefined ? { interval: 'monthly', amount } : { interval: 'monthly', amount, refillDay })),
);

const createArb: fc.Arbitrary<CreateSpec> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<CreateSpec>({ kind: 'unlimited' }) },
  { weight: 1, arbitrary: balanceArb.map((remaining): CreateSpec => ({ kind: 'limited', remaining, refill: null })) },
  { weight: 4, arbitrary: fc.tuple(balanceArb, refillArb).map(([remaining, refill]): CreateSpec => ({ kind: 'limited', remaining, refill })) },
  { weight: 1, arbitrary: refillArb.map((refill): CreateSpec => ({ kind: 'refillWithoutRemaining', refill })) },
);

const creditsOpArb: fc.Arbitrary<CreditsOp> = fc.oneof(
  { weight: 3, arbitrary: balanceArb.map((value): CreditsOp => ({ op: 'set', value })) },
  { weight: 1, arbitrary: fc.constant<CreditsOp>({ op: 'set', value: null }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 20 }).map((value): CreditsOp => ({ op: 'increment', value })) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 40 }).map((value): CreditsOp => ({ op: 'decrement', value })) },
);

const keyCreditsArb: fc.Arbitrary<KeyCreditsChange> = fc.oneof(
  fc.constant<KeyCreditsChange>({ kind: 'null' }),
  balanceArb.map((remaining): KeyCreditsChange => ({ kind: 'remaining', remaining })),
  fc.constant<KeyCreditsChange>({ kind: 'remainingNull' }),
  fc.constant<KeyCreditsChange>({ kind: 'refillNull' }),
  balanceArb.map((remaining): KeyCreditsChange => ({ kind: 'remainingAndRefillNull', remaining })),
  { weight: 3, arbitrary: refillArb.map((refill): KeyCreditsChange => ({ kind: 'refill', refill })) },
  fc.tuple(balanceArb, refillArb).map(([remaining, refill]): KeyCreditsChange => ({ kind: 'remainingAndRefill', remaining, refill })),
);

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const offsetArb = fc.constantFrom(-1, 0, 1);

const moveArb: fc.Arbitrary<ClockMove> = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 1_000 }).map((ms): ClockMove => ({ kind: 'step', ms })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 120 }).map((min): ClockMove => ({ kind: 'step', ms: min * MINUTE_MS })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 30 }).map((h): ClockMove => ({ kind: 'step', ms: h * HOUR_MS })) },
  { weight: 3, arbitrary: offsetArb.map((offset): ClockMove => ({ kind: 'midnight', offset })) },
  { weight: 2, arbitrary: offsetArb.map((offset): ClockMove => ({ kind: 'monthStart', offset })) },
  { weight: 2, arbitrary: offsetArb.map((offset): ClockMove => ({ kind: 'lastDay', offset })) },
  { weight: 3, arbitrary: fc.tuple(indexArb, offsetArb).map(([index, offset]): ClockMove => ({ kind: 'nextRefill', index, offset })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 420 }), fc.integer({ min: 0, max: DAY_MS - 1 }))
      .map(([days, ms]): ClockMove => ({ kind: 'jump', ms: days * DAY_MS + ms })),
  },
);

const commandArbs: Array<fc.Arbitrary<KeyCommand>> = [
  createArb.map((spec) => new CreateKey(spec)),
  fc.tuple(indexArb, fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined, freq: 6 })).map(([index, cost]) => new Verify(index, cost)),
  fc.tuple(indexArb, fc.integer({ min: 0, max: 3 })).map(([index, cost]) => new Verify(index, cost)),
  fc.tuple(indexArb, creditsOpArb).map(([index, change]) => new UpdateCredits(index, change)),
  fc.tuple(indexArb, keyCreditsArb).map(([index, change]) => new UpdateKeyCredits(index, change)),
  indexArb.map((index) => new GetKey(index)),
  fc.tuple(moveArb, fc.boolean()).map(([move, inspect]) => new AdvanceClock(move, inspect)),
  fc.tuple(moveArb, fc.boolean()).map(([move, inspect]) => new AdvanceClock(move, inspect)),
];

/** Starts around interesting dates: a month end, a leap February, a year end, a 30-day month end. */
const startArb = fc
  .tuple(
    fc.constantFrom(Date.UTC(2027, 0, 28), Date.UTC(2028, 1, 27), Date.UTC(2027, 11, 30), Date.UTC(2026, 3, 29)),
    fc.integer({ min: 0, max: 23 }),
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: HOUR_MS - 1 })),
  )
  .map(([day, hour, ms]) => day + hour * HOUR_MS + ms);

describe('credits and refill against a reference model', () => {
  it('keeps balances, verifications, credit updates and refills in step with the model', () => {
    assertProperty(
      fc.property(
        startArb,
        fc.array(createArb, { minLength: 1, maxLength: 4 }),
        fc.commands(commandArbs, { maxCommands: 60, size: 'max' }),
        (startMs, initial, commands) => {
          const fx = makeEngine({ startMs });
          const model: Model = { nowMs: startMs, keys: [] };
          const real: Real = { fx, handles: [] };
          // A few keys up front, so that most sequences spend their commands on existing keys.
          for (const spec of initial) new CreateKey(spec).run(model, real);
          fc.modelRun(() => ({ model, real }), commands);
          // Finally, every key as the model sees it, settled to the last instant.
          for (const [i, mk] of model.keys.entries()) {
            settle(mk, model.nowMs);
            expectView(getView(real, i), mk, `final read of key #${i} at ${iso(model.nowMs)}`);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('reference model sanity (the model itself, on worked examples)', () => {
  it('refills at 00:00 UTC on min(refillDay, month length), replacing the balance', () => {
    const key: ModelKey = { remaining: 50, refill: { interval: 'monthly', amount: 1000, refillDay: 31 }, anchorMs: Date.UTC(2027, 1, 1) };
    expect(settle(key, Date.UTC(2027, 1, 28) - 1)).toBe(false);
    expect(key.remaining).toBe(50);
    expect(settle(key, Date.UTC(2027, 1, 28))).toBe(true);
    expect(key.remaining).toBe(1000);
    expect(nextBoundaryAfter(Date.UTC(2028, 0, 31), { interval: 'monthly', amount: 1, refillDay: 31 })).toBe(Date.UTC(2028, 1, 29));
    expect(nextBoundaryAfter(Date.UTC(2027, 3, 1), { interval: 'monthly', amount: 1, refillDay: 31 })).toBe(Date.UTC(2027, 3, 30));
    expect(nextMidnightAfter(Date.UTC(2027, 11, 31))).toBe(Date.UTC(2028, 0, 1));
    expect(nextLastDayAfter(Date.UTC(2028, 1, 29))).toBe(Date.UTC(2028, 2, 31));
    expect(nextMonthStartAfter(Date.UTC(2027, 11, 1))).toBe(Date.UTC(2028, 0, 1));
  });
});
