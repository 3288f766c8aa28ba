/**
 * The history checkers against the real engine, with fast-check's scheduler choosing the
 * interleaving. Every operation is an async task with three scheduled points — sent (invoke time
 * recorded), executed by the engine, answered (completion time recorded) — so the scheduler picks
 * the invoke order, the execution order and the completion order (answers out of invoke order
 * included), and when a scheduled task moves the manual clock across refill boundaries and
 * rate-limit windows. Some answers are lost ('unknown'), after the engine executed the operation
 * or before it reached it. The calls are recorded through HistoryWriter.recordCall and read back
 * with readHistory, as a run's history is, before judgeInvariants judges them:
 *
 * - a correct engine is never flagged, whatever the interleaving;
 * - each engine fault (faults.ts) at rate 1, in a scenario shaped so that it must show, is always
 *   reported under the expected invariant for the faulted key, with a witness that has times.
 */
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EngineFaults, Result } from '../../../src/engine/index.js';
import { DEFAULT_ERRORS_URL, PROBLEMS, errorTypeUrl } from '../../../src/http/problems.js';
import { type InvariantReport, type InvariantId, judgeInvariants } from '../../../src/load/invariants/judge.js';
import { type HistoryEvent, HistoryWriter, readHistory } from '../../../src/load/history/history.js';
import type { Operation } from '../../../src/load/scenario/scenario.js';
import { type EngineFixture, makeEngine, unwrap } from '../../helpers/engine.js';
import { assertProperty } from '../../helpers/property.js';

/** Wall time of the first tick (a logical clock: one ms per reading, so every instant is distinct). */
const W0 = 1_800_000_000_000;
const DAY_MS = 86_400_000;

type Fate = 'ok' | 'lost-applied' | 'lost-dropped';
interface HttpResponse {
  status: number;
  body: unknown;
}

/** The answer as the HTTP binding carries it: `data` envelope, or the error type URL and status. */
function httpResponse(result: Result<unknown>): HttpResponse {
  const meta = { requestId: 'req_scheduler' };
  if (result.ok) return { status: 200, body: { meta, data: result.value } };
  const { status, title } = PROBLEMS[result.error.code];
  return { status, body: { meta, error: { type: errorTypeUrl(result.error.code, DEFAULT_ERRORS_URL), title, status, detail: result.error.detail } } };
}

/** The real engine on a manual clock, every call recorded into a history file as a run records it. */
class Harness {
  readonly fx: EngineFixture;
  readonly #writer: HistoryWriter;
  readonly #path: string;
  #tick = 0;

  private constructor(fx: EngineFixture, writer: HistoryWriter, path: string) {
    this.fx = fx;
    this.#writer = writer;
    this.#path = path;
  }

  static async open(path: string, startMs: number): Promise<Harness> {
    const writer = await HistoryWriter.create(path, { run: { scenario: 'scheduler-property', target: 'simulator' } });
    const h = new Harness(makeEngine({ startMs }), writer, path);
    unwrap(h.fx.engine.admin.createNamespace(h.fx.workspaceId, 'ns'));
    return h;
  }

  #wallNow(): number {
    this.#tick += 1;
    return W0 + this.#tick;
  }

  #execute(op: Operation, body: unknown): HttpResponse {
    const { engine, rootKey } = this.fx;
    const input = body as never;
    switch (op) {
      case 'keys.createKey':
        return httpResponse(engine.keys.createKey(rootKey, input));
      case 'keys.verifyKey':
        return httpResponse(engine.keys.verifyKey(rootKey, input));
      case 'keys.updateCredits':
        return httpResponse(engine.keys.updateCredits(rootKey, input));
      case 'keys.getKey':
        return httpResponse(engine.keys.getKey(rootKey, input));
      case 'identities.createIdentity':
        return httpResponse(engine.identities.createIdentity(rootKey, input));
      case 'ratelimit.limit':
        return httpResponse(engine.ratelimit.limit(rootKey, input));
      case 'ratelimit.setOverride':
        return httpResponse(engine.ratelimit.setOverride(rootKey, input));
      case 'ratelimit.deleteOverride':
        return httpResponse(engine.ratelimit.deleteOverride(rootKey, input));
      default:
        throw new Error(`test bug: ${op} is not simulated`);
    }
  }

  /** A fixture call, sent and answered before the scheduled part; returns `data`. */
  fixture<T>(op: Operation, body: unknown): T {
    const seq = this.#writer.begin();
    const serviceInvokeMs = this.fx.clock.now();
    const invokeMs = this.#wallNow();
    const response = this.#execute(op, body);
    const completeMs = this.#wallNow();
    this.#writer.recordCall({ seq, op, body, invokeMs, completeMs, serviceInvokeMs, serviceCompleteMs: this.fx.clock.now(), response });
    if (response.status !== 200) throw new Error(`test bug: fixture ${op} answered ${response.status}: ${JSON.stringify(response.body)}`);
    return (response.body as { data: T }).data;
  }

  /**
   * One concurrent call: the scheduler decides when it is sent, when the engine executes it and
   * when its answer arrives. A lost answer is recorded as 'unknown'; 'lost-dropped' never reaches
   * the engine.
   */
  async call(s: fc.Scheduler, label: string, op: Operation, body: unknown, fate: Fate = 'ok'): Promise<HttpResponse | 'unknown'> {
    await s.schedule(Promise.resolve(), `${label}: send`);
    const seq = this.#writer.begin();
    const serviceInvokeMs = this.fx.clock.now();
    const invokeMs = this.#wallNow();
    await s.schedule(Promise.resolve(), `${label} #${seq}: ${fate === 'lost-dropped' ? 'lost before the engine' : 'engine executes'}`);
    const response = fate === 'lost-dropped' ? undefined : this.#execute(op, body);
    await s.schedule(Promise.resolve(), `${label} #${seq}: ${fate === 'ok' ? 'answer arrives' : 'client gives up'}`);
    const completeMs = this.#wallNow();
    const serviceCompleteMs = this.fx.clock.now();
    const recorded = fate === 'ok' && response !== undefined ? response : 'unknown';
    this.#writer.recordCall({ seq, op, body, invokeMs, completeMs, serviceInvokeMs, serviceCompleteMs, response: recorded });
    return recorded;
  }

  /** Moves the service clock forward when the scheduler says so. */
  async advance(s: fc.Scheduler, byMs: number): Promise<void> {
    await s.schedule(Promise.resolve(), `clock +${byMs} ms`);
    this.fx.clock.advance(byMs);
  }

  /** Closes the history and reads it back, as `keysim check` does. */
  async close(): Promise<{ events: HistoryEvent[]; wallSkewMs: number | undefined }> {
    await this.#writer.close();
    const { header, events } = await readHistory(this.#path);
    return { events, wallSkewMs: header.wallSkewMs };
  }

  /** Closes without reading (after a failure, so that no stream stays open). */
  async abandon(): Promise<void> {
    await this.#writer.close().catch(() => undefined);
  }
}

function check(read: { events: HistoryEvent[]; wallSkewMs: number | undefined }): InvariantReport {
  return judgeInvariants(read.events, read.wallSkewMs === undefined ? {} : { wallSkewMs: read.wallSkewMs });
}

function describeViolations(report: InvariantReport): string {
  return JSON.stringify(
    report.violations.map((v) => ({ invariant: v.invariant, subject: v.subject, message: v.message, witness: v.witness.map((e) => `#${e.seq} ${e.op}`) })),
    null,
    1,
  );
}

function describeEvents(events: readonly HistoryEvent[]): string {
  return events.map((e) => JSON.stringify(e)).join('\n');
}

// ── scenarios ─────────────────────────────────────────────────────────────────────────────

type RefillPlan = { interval: 'daily'; amount: number } | { interval: 'monthly'; amount: number; refillDay: number };

interface KeyPlan {
  remaining: number;
  refill: RefillPlan | null;
  /** An autoApply limit on the key. */
  burst: { limit: number; duration: number } | undefined;
  /** Belongs to the identity 'org', whose limit its keys share. */
  member: boolean;
}

type OpKind = 'verify' | 'updateCredits' | 'getKey' | 'limit' | 'override';

interface OpPlan {
  kind: OpKind;
  target: number;
  cost: number;
  value: number;
  pick: number;
  fate: Fate;
}

interface Key {
  keyId: string;
  key: string;
}

const refillArb: fc.Arbitrary<RefillPlan | null> = fc.oneof(
  fc.constant(null),
  fc.record({ interval: fc.constant('daily' as const), amount: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ interval: fc.constant('monthly' as const), amount: fc.integer({ min: 1, max: 4 }), refillDay: fc.constantFrom(1, 31) }),
);

const keyArb: fc.Arbitrary<KeyPlan> = fc.record({
  remaining: fc.nat(4),
  refill: refillArb,
  burst: fc.option(fc.record({ limit: fc.integer({ min: 1, max: 3 }), duration: fc.constantFrom(1_000, 60_000) }), { nil: undefined }),
  member: fc.boolean(),
});

const fateArb: fc.Arbitrary<Fate> = fc.oneof(
  { arbitrary: fc.constant<Fate>('ok'), weight: 12 },
  { arbitrary: fc.constant<Fate>('lost-applied'), weight: 1 },
  { arbitrary: fc.constant<Fate>('lost-dropped'), weight: 1 },
);

const opArb: fc.Arbitrary<OpPlan> = fc.record({
  kind: fc.oneof(
    { arbitrary: fc.constant<OpKind>('verify'), weight: 6 },
    { arbitrary: fc.constant<OpKind>('updateCredits'), weight: 2 },
    { arbitrary: fc.constant<OpKind>('getKey'), weight: 1 },
    { arbitrary: fc.constant<OpKind>('limit'), weight: 4 },
    { arbitrary: fc.constant<OpKind>('override'), weight: 1 },
  ),
  target: fc.nat(2),
  cost: fc.nat(3),
  value: fc.nat(5),
  pick: fc.nat(5),
  fate: fateArb,
});

/** Clock moves: within a rate-limit window, across 1 s windows, across a daily and a monthly boundary. */
const advanceArb = fc.constantFrom(700, 2_000, 3_600_000, DAY_MS);

/** The identity, the keys and an override on 'vip', created one after another before the concurrent part. */
function setUp(h: Harness, plans: readonly KeyPlan[]): Key[] {
  h.fixture('identities.createIdentity', { externalId: 'org', ratelimits: [{ name: 'org', limit: 3, duration: 1_000, autoApply: true }] });
  const keys = plans.map((k) =>
    h.fixture<Key>('keys.createKey', {
      apiId: h.fx.apiId,
      credits: k.refill === null ? { remaining: k.remaining } : { remaining: k.remaining, refill: k.refill },
      ...(k.member ? { externalId: 'org' } : {}),
      ...(k.burst === undefined ? {} : { ratelimits: [{ name: 'burst', ...k.burst, autoApply: true }] }),
    }),
  );
  h.fixture('ratelimit.setOverride', { namespace: 'ns', identifier: 'vip', limit: 1, duration: 1_000 });
  return keys;
}

/** The request of a planned operation on these keys; ratelimit.limit goes to 'vip' (overridden), 'u1' or 'u2'. */
function request(o: OpPlan, keys: readonly Key[]): { op: Operation; body: unknown; label: string } {
  const key = keys[o.target % keys.length] as Key;
  const duration = o.pick % 2 === 0 ? 1_000 : 60_000;
  switch (o.kind) {
    case 'verify': {
      // Sometimes a limit named in the request: inline, or the key's own 'burst' with a cost of 2.
      const ratelimits = o.pick % 3 === 0 ? [{ name: 'inline', limit: 1 + (o.value % 3), duration }] : o.pick === 4 ? [{ name: 'burst', cost: 2 }] : undefined;
      return {
        op: 'keys.verifyKey',
        body: { key: key.key, credits: { cost: o.cost }, ...(ratelimits === undefined ? {} : { ratelimits }) },
        label: `verifyKey ${key.keyId} cost ${o.cost}${ratelimits === undefined ? '' : ` +${ratelimits[0]?.name}`}`,
      };
    }
    case 'updateCredits': {
      const operation = (['set', 'increment', 'decrement'] as const)[o.pick % 3] as 'set' | 'increment' | 'decrement';
      const value = operation === 'set' && o.pick === 3 && o.value === 5 ? null : o.value;
      return { op: 'keys.updateCredits', body: { keyId: key.keyId, operation, value }, label: `updateCredits ${key.keyId} ${operation} ${String(value)}` };
    }
    case 'getKey':
      return { op: 'keys.getKey', body: { keyId: key.keyId }, label: `getKey ${key.keyId}` };
    case 'limit': {
      const identifier = ['vip', 'u1', 'u2'][o.target % 3] as string;
      const body = { namespace: 'ns', identifier, limit: 1 + (o.value % 3), duration, cost: o.cost % 3 };
      return { op: 'ratelimit.limit', body, label: `limit ${identifier} ${body.limit}/${duration} ms cost ${body.cost}` };
    }
    case 'override':
      return o.pick % 3 === 0
        ? { op: 'ratelimit.deleteOverride', body: { namespace: 'ns', identifier: 'vip' }, label: 'deleteOverride vip' }
        : {
            op: 'ratelimit.setOverride',
            body: { namespace: 'ns', identifier: 'vip', limit: o.value % 4, duration },
            label: `setOverride vip ${o.value % 4}/${duration} ms`,
          };
  }
}

function planned(h: Harness, s: fc.Scheduler, ops: readonly OpPlan[], keys: readonly Key[]): Array<Promise<unknown>> {
  return ops.map((o) => {
    const { op, body, label } = request(o, keys);
    return h.call(s, `${label}${o.fate === 'ok' ? '' : ` (${o.fate})`}`, op, body, o.fate);
  });
}

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keysim-scheduler-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

/** Whether the run may be short (a replay, or KEYSIM_FC_RUNS): coverage is then not asserted. */
const replaying = process.env.KEYSIM_FC_PATH !== undefined || process.env.KEYSIM_FC_RUNS !== undefined;

// ── a correct service ─────────────────────────────────────────────────────────────────────

describe('scheduled interleavings against the real engine', () => {
  test('a correct service never triggers a violation', async () => {
    const seen = { outOfOrder: 0, crossedDay: 0, verifications: 0, rateLimitChecks: 0 };
    const scenarioArb = fc.record({
      startMs: fc.constantFrom(Date.UTC(2027, 0, 31, 23, 59, 58, 500), Date.UTC(2027, 1, 28, 23, 59, 59, 900), Date.UTC(2027, 0, 15, 12)),
      keys: fc.array(keyArb, { minLength: 1, maxLength: 3 }),
      ops: fc.array(opArb, { minLength: 4, maxLength: 14 }),
      // Two more operations whose answers are lost: one the engine executed, one it never saw.
      lost: fc.tuple(opArb, opArb).map(([a, b]): OpPlan[] => [
        { ...a, fate: 'lost-applied' },
        { ...b, fate: 'lost-dropped' },
      ]),
      advances: fc.array(advanceArb, { minLength: 1, maxLength: 2 }),
    });
    await assertProperty(
      fc.asyncProperty(fc.scheduler(), scenarioArb, async (s, sc) => {
        const h = await Harness.open(join(dir, 'clean.jsonl.gz'), sc.startMs);
        let read: Awaited<ReturnType<Harness['close']>>;
        let crossedDay: boolean;
        try {
          const keys = setUp(h, sc.keys);
          const tasks = [...planned(h, s, [...sc.ops, ...sc.lost], keys), ...sc.advances.map((ms) => h.advance(s, ms))];
          await s.waitFor(Promise.all(tasks));
          crossedDay = Math.floor(h.fx.clock.now() / DAY_MS) !== Math.floor(sc.startMs / DAY_MS);
          read = await h.close();
        } catch (error) {
          await h.abandon();
          throw error;
        }
        const report = check(read);
        if (!report.passed)
          throw new Error(`a correct service was flagged:\n${describeViolations(report)}\nhistory (completion order):\n${describeEvents(read.events)}`);
        const seqs = read.events.map((e) => e.seq);
        if (seqs.some((seq, i) => i > 0 && seq < (seqs[i - 1] as number))) seen.outOfOrder++;
        if (crossedDay) seen.crossedDay++;
        seen.verifications += report.checked.verifications;
        seen.rateLimitChecks += report.checked.rateLimitChecks;
      }),
      { numRuns: 150 },
    );
    if (!replaying) {
      // The scheduler did produce what the property is about.
      expect(seen.outOfOrder, 'answers out of invoke order').toBeGreaterThan(0);
      expect(seen.crossedDay, 'refill boundaries crossed').toBeGreaterThan(0);
      expect(seen.verifications, 'verifications checked').toBeGreaterThan(0);
      expect(seen.rateLimitChecks, 'rate-limit decisions checked').toBeGreaterThan(0);
    }
  });

  // ── each injected fault ─────────────────────────────────────────────────────────────────

  /**
   * The faulted key: no rate limit, no credit update and every answer known, because a lost
   * answer, a concurrent increment or a RATE_LIMITED verification on it would let a correct
   * service explain the same answers (the fault could then rightly go unreported). The noise runs
   * on other keys and limits, lost answers included. `before` runs concurrently with the noise;
   * when `after` is not empty, the clock crosses a daily boundary once every `before` answer has
   * arrived, and only then is `after` sent.
   */
  interface Victim {
    budget: number;
    refill: RefillPlan | null;
    before: number[];
    after: number[];
    advanceMs: number;
  }

  interface FaultScenario {
    victim: Victim;
    noiseKeys: KeyPlan[];
    noise: OpPlan[];
    noiseAdvances: number[];
  }

  const noArb = fc.constant<number[]>([]);

  function faultScenarioArb(victimArb: fc.Arbitrary<Victim>, clockNoise: boolean): fc.Arbitrary<FaultScenario> {
    return fc.record({
      victim: victimArb,
      noiseKeys: fc.array(keyArb, { minLength: 1, maxLength: 2 }),
      noise: fc.array(opArb, { minLength: 0, maxLength: 8 }),
      // The skip-refill scenario moves the clock only once, after the first phase: see Victim.
      noiseAdvances: clockNoise ? fc.array(advanceArb, { maxLength: 1 }) : noArb,
    });
  }

  async function faultProperty(
    name: string,
    faults: EngineFaults,
    expected: InvariantId,
    startMs: number,
    arb: fc.Arbitrary<FaultScenario>,
    numRuns: number,
  ): Promise<void> {
    await assertProperty(
      fc.asyncProperty(fc.scheduler(), arb, async (s, sc) => {
        const h = await Harness.open(join(dir, `${name}.jsonl.gz`), startMs);
        let read: Awaited<ReturnType<Harness['close']>>;
        let victim: Key;
        try {
          const noiseKeys = setUp(h, sc.noiseKeys);
          const v = sc.victim;
          victim = h.fixture<Key>('keys.createKey', {
            apiId: h.fx.apiId,
            credits: v.refill === null ? { remaining: v.budget } : { remaining: v.budget, refill: v.refill },
          });
          unwrap(h.fx.engine.setFaults(faults));
          const verify = (phase: string, cost: number, i: number) =>
            h.call(s, `victim ${phase}[${i}] verifyKey cost ${cost}`, 'keys.verifyKey', { key: victim.key, credits: { cost } });
          const before = v.before.map((cost, i) => verify('before', cost, i));
          const boundary =
            v.after.length === 0
              ? Promise.resolve()
              : (async () => {
                  await Promise.all(before);
                  await h.advance(s, v.advanceMs);
                })();
          const after = v.after.map(async (cost, i) => {
            await boundary;
            return verify('after', cost, i);
          });
          const noise = [...planned(h, s, sc.noise, noiseKeys), ...sc.noiseAdvances.map((ms) => h.advance(s, ms))];
          await s.waitFor(Promise.all([...before, boundary, ...after, ...noise]));
          read = await h.close();
        } catch (error) {
          await h.abandon();
          throw error;
        }
        const report = check(read);
        const hits = report.violations.filter((v) => v.invariant === expected && v.subject === victim.keyId);
        if (hits.length === 0) {
          throw new Error(
            `${name} on ${victim.keyId} went unnoticed (no ${expected} violation); violations:\n${describeViolations(report)}\nhistory (completion order):\n${describeEvents(read.events)}`,
          );
        }
        for (const v of hits) {
          expect(v.witness.length).toBeGreaterThan(0);
          for (const e of v.witness) {
            expect(Number.isFinite(e.invokeMs) && Number.isFinite(e.completeMs)).toBe(true);
            expect(e.completeMs).toBeGreaterThanOrEqual(e.invokeMs);
            expect(Number.isFinite(e.serviceInvokeMs) && Number.isFinite(e.serviceCompleteMs)).toBe(true);
          }
          expect(v.witness.some((e) => e.op === 'keys.verifyKey' && e.request.keyId === victim.keyId)).toBe(true);
        }
      }),
      { numRuns },
    );
  }

  const costsArb = (min: number, max: number, minLength: number) => fc.array(fc.integer({ min, max }), { minLength, maxLength: 8 });
  const sum = (costs: readonly number[]) => costs.reduce((n, c) => n + c, 0);

  test('over-admission (a USAGE_EXCEEDED answered VALID) is always reported as over-spend', async () => {
    // More credits asked for than the budget, every cost ≥ 1: at least one verification finds
    // too few credits, is over-admitted, and the VALID answers then spend more than the budget.
    const victimArb = costsArb(1, 3, 1).chain((costs) =>
      fc.record({
        budget: fc.integer({ min: 0, max: sum(costs) - 1 }),
        refill: fc.constant(null),
        before: fc.constant(costs),
        after: noArb,
        advanceMs: fc.constant(0),
      }),
    );
    await faultProperty(
      'over-admission',
      { overAdmitRate: 1 },
      'credits.no-over-spend',
      Date.UTC(2027, 0, 31, 23, 59, 58, 500),
      faultScenarioArb(victimArb, true),
      80,
    );
  });

  test('a lost decrement is always reported as over-spend once the VALID answers exceed the budget', async () => {
    // Every cost fits the budget, so with the balance never going down every verification is
    // VALID; together they ask for more than the budget.
    const victimArb = costsArb(1, 3, 2).chain((costs) =>
      fc.record({
        budget: fc.integer({ min: Math.max(...costs), max: sum(costs) - 1 }),
        refill: fc.constant(null),
        before: fc.constant(costs),
        after: noArb,
        advanceMs: fc.constant(0),
      }),
    );
    await faultProperty(
      'lost-decrement',
      { lostDecrementRate: 1 },
      'credits.no-over-spend',
      Date.UTC(2027, 0, 31, 23, 59, 58, 500),
      faultScenarioArb(victimArb, true),
      80,
    );
  });

  test('a skipped refill is always reported by the verifications after the boundary', async () => {
    // The balance stays below the refill amount (budget < amount, no increments), the boundary is
    // crossed, then verifications of cost ≤ amount: on the faulty engine either the first of them
    // is refused while the refill surely left enough, or the last VALID one reports less than the
    // refill amount minus everything that could have been spent since.
    const victimArb = fc.integer({ min: 1, max: 5 }).chain((amount) =>
      fc.record({
        budget: fc.integer({ min: 0, max: amount - 1 }),
        refill: fc.constant<RefillPlan>({ interval: 'daily', amount }),
        before: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 4 }),
        after: costsArb(1, amount, 1),
        advanceMs: fc.constantFrom(1_500, 3_600_000, 2 * DAY_MS),
      }),
    );
    await faultProperty('skipped-refill', { skipRefillRate: 1 }, 'credits.refill', Date.UTC(2027, 0, 15, 23, 59, 59), faultScenarioArb(victimArb, false), 80);
  });
});
