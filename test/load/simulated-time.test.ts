/**
 * Load on simulated time through the runner, on the embedded simulator: a phase with a
 * serviceClock crosses the intended service-time range under load (here a month end, with a
 * monthly refill on day 1), its history brackets every request on the service clock, and the
 * invariant checks over it stay clean. Also: the closed model, a live target, a fromMs in the past.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { readHistory } from '../../src/load/history/history.js';
import { type RunOptions, runScenario } from '../../src/load/run/runner.js';
import { type LoadSettings, type Scenario, defineScenario } from '../../src/load/scenario/scenario.js';
import { type Target, liveTarget, startEmbeddedSimulator } from '../../src/load/target/target.js';
import { postJson } from '../helpers/http.js';

const FROM_MS = Date.parse('2027-01-31T23:00:00Z');
const BOUNDARY_MS = Date.parse('2027-02-01T00:00:00Z');
const TO_MS = Date.parse('2027-02-01T01:00:00Z');
const CREDITS = 5_000;
const REFILL = 2_000;
const VERIFICATIONS = 1_000;

const SETTINGS: LoadSettings = { rate: 500, connections: 8, pipelining: 1, durationMs: 2_000, warmupMs: 0, timeoutMs: 10_000, model: 'open' };

interface Fixtures {
  keyId: string;
  key: string;
  /** Every balance a VALID answer reported. */
  credits: number[];
}

const dataOf = (body: unknown): Record<string, unknown> =>
  typeof body === 'object' && body !== null && typeof (body as { data?: unknown }).data === 'object'
    ? ((body as { data: Record<string, unknown> }).data ?? {})
    : {};

/**
 * Verifications over 2027-01-31T23:00Z – 2027-02-01T01:00Z (1,000 in 2 s at the test's settings),
 * on a key refilled to 2,000 on the 1st of each month. `credits` is the balance before the refill:
 * more than the load can spend, so a balance tells the side of the refill it was answered on.
 */
function monthEnd(serviceClock: { fromMs: number; toMs: number } = { fromMs: FROM_MS, toMs: TO_MS }, credits = CREDITS): Scenario<unknown> {
  const scenario = defineScenario<Fixtures>({
    name: 'month-end-on-simulated-time',
    description: 'Verifications across a month end on simulated time',
    requires: ['clock'],
    async setup(ctx) {
      // Mid-January: no refill before the one at the sweep's month end.
      await ctx.admin?.clockSet(Date.parse('2027-01-15T12:00:00Z'));
      const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-month-end` });
      const { keyId, key } = await ctx.api.data<{ keyId: string; key: string }>('keys.createKey', {
        apiId,
        credits: { remaining: credits, refill: { interval: 'monthly', amount: REFILL, refillDay: 1 } },
      });
      return { keyId, key, credits: [] };
    },
    mix: [
      {
        name: 'verify',
        weight: 1,
        build: (f) => ({ op: 'keys.verifyKey', body: { key: f.key } }),
        check(r, f) {
          const d = dataOf(r.body);
          if (r.status !== 200 || d.code !== 'VALID' || typeof d.credits !== 'number')
            return `expected VALID with credits, got ${r.status} ${JSON.stringify(r.body)}`;
          f.credits.push(d.credits);
          return undefined;
        },
      },
    ],
    phases: () => [{ name: 'across the month end', durationMs: SETTINGS.durationMs, serviceClock }],
    async finish(ctx, f, results) {
      const d = await ctx.api.data<{ credits: { remaining: number } }>('keys.getKey', { keyId: f.keyId });
      const before = f.credits.filter((c) => c >= REFILL);
      const after = f.credits.filter((c) => c < REFILL);
      // Every verification spent 1 credit: the ones before the refill from `credits`, the ones after from 2,000.
      const spentBefore = credits - Math.min(...before);
      const spentAfter = REFILL - d.credits.remaining;
      // Requests without an answer (cut off at the end of a closed-model phase: more of them on a
      // busy machine) may or may not have spent theirs; unseen spending before the refill is lost
      // in it, so they count at most once each.
      const verify = results.operation('keys.verifyKey');
      const withoutAnswer = (verify?.cutOff ?? 0) + Object.values(verify?.transportErrors ?? {}).reduce((a, b) => a + b, 0);
      const spent = spentBefore + spentAfter;
      return [
        { name: 'refill seen under load', passed: before.length > 0 && after.length > 0, detail: `${before.length} answers before it, ${after.length} after` },
        {
          name: 'every verification accounted for',
          passed: spent >= f.credits.length && spent <= f.credits.length + withoutAnswer,
          detail: `${spentBefore} + ${spentAfter} of ${f.credits.length} answered and ${withoutAnswer} without answer`,
        },
      ];
    },
  });
  return scenario as unknown as Scenario<unknown>;
}

function options(scenario: Scenario<unknown>, target: Target, extra: Partial<RunOptions> = {}): RunOptions {
  return { scenario, target, settings: SETTINGS, seed: 11, thresholds: [], keep: false, keysimVersion: '0.0.0-test', ...extra };
}

const failed = (checks: ReadonlyArray<{ name: string; passed: boolean; detail: string }>) =>
  checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);

describe('load on simulated time', () => {
  let sim: Target;

  beforeAll(async () => {
    sim = await startEmbeddedSimulator({ seed: 4 });
  });

  afterAll(async () => {
    await sim?.close();
  });

  beforeEach(async () => {
    expect((await postJson(sim.url, '/_sim/reset', {}, sim.rootKey)).status).toBe(200);
  });

  test('1,000 verifications across a month end in 2 s: the refill shows between them, every request is bracketed, the history is clean', async () => {
    const historyPath = join(mkdtempSync(join(tmpdir(), 'keysim-simulated-time-')), 'history.jsonl.gz');
    const report = await runScenario(options(monthEnd(), sim, { historyPath }));
    expect(report.status).toBe('completed');
    expect(failed(report.checks)).toEqual([]);
    expect(report.invariants?.violations).toEqual([]);
    expect(report.invariants?.verdict).toBe('clean');
    expect(report.invariants?.invariants.length).toBeGreaterThanOrEqual(6);
    expect(report.checks.find((c) => c.name === 'refill seen under load')?.passed).toBe(true);
    expect(report.phases).toMatchObject([
      { name: 'across the month end', serviceClockFrom: '2027-01-31T23:00:00.000Z', serviceClockTo: '2027-02-01T01:00:00.000Z' },
    ]);
    expect(report.operations.find((o) => o.operation === 'keys.verifyKey')?.codes).toEqual({ VALID: VERIFICATIONS });

    const { events } = await readHistory(historyPath);
    const load = events.filter((e) => e.op === 'keys.verifyKey');
    expect(load).toHaveLength(VERIFICATIONS);
    let surelyBefore = 0;
    let surelyAfter = 0;
    for (const e of load) {
      const sInv = e.serviceInvokeMs as number;
      const sComp = e.serviceCompleteMs as number;
      expect(sInv).toBeGreaterThanOrEqual(FROM_MS);
      expect(sComp).toBeLessThanOrEqual(TO_MS);
      expect(sComp).toBeGreaterThanOrEqual(sInv);
      const credits = e.outcome === 'unknown' ? undefined : e.outcome.credits;
      // The bracket tells the side of the boundary, and the balance agrees.
      if (sComp < BOUNDARY_MS) {
        surelyBefore++;
        expect(credits).toBeGreaterThanOrEqual(CREDITS - VERIFICATIONS);
      } else if (sInv >= BOUNDARY_MS) {
        surelyAfter++;
        expect(credits).toBeLessThan(REFILL);
      }
    }
    // The sweep covered the range under load: requests sit clearly on each side. (How many do
    // depends on the pace — a busy machine answers slowly, and a slow answer's bracket spans the
    // boundary — so only that some do is asserted.)
    expect(surelyBefore).toBeGreaterThan(0);
    expect(surelyAfter).toBeGreaterThan(0);
    expect(Math.min(...load.map((e) => e.serviceInvokeMs as number))).toBe(FROM_MS);
    expect(Math.max(...load.map((e) => e.serviceCompleteMs as number))).toBeGreaterThan(TO_MS - 600_000);
  });

  test('the closed model runs on simulated time too, every verification accounted for with the requests cut off at its end (once failed on a busy machine): the clock ends exactly at toMs', async () => {
    // As fast as it goes, the closed model may spend the whole refill (USAGE_EXCEEDED then fails the per-response check), never a million credits.
    const report = await runScenario(
      options(monthEnd(undefined, 1_000_000), sim, { settings: { ...SETTINGS, model: 'closed', connections: 2, durationMs: 1_000 } }),
    );
    expect(report.phases[0]).toMatchObject({ serviceClockFrom: '2027-01-31T23:00:00.000Z', serviceClockTo: '2027-02-01T01:00:00.000Z' });
    expect(report.checks.find((c) => c.name === 'refill seen under load')?.passed).toBe(true);
    expect(report.checks.find((c) => c.name === 'every verification accounted for')?.passed).toBe(true);
    const now = await postJson(sim.url, '/_sim/clock.get', {}, sim.rootKey);
    expect((now.body as { data: { nowMs: number } }).data.nowMs).toBe(TO_MS);
  });

  test('on a live target the run fails, saying the phase needs the simulator', async () => {
    const live = liveTarget(sim.url, sim.rootKey);
    await expect(runScenario(options(monthEnd(), live))).rejects.toThrow(
      /failed during the service clock of phase "across the month end": its load runs on simulated time \(serviceClock\).*Run it on the simulator/,
    );
  });

  test('an invalid serviceClock on a later phase fails the run before any phase runs (not after the earlier ones)', async () => {
    const base = monthEnd();
    let firstPhaseRan = false;
    const scenario: Scenario<unknown> = {
      ...base,
      phases: () => [
        {
          name: 'fine',
          durationMs: 5_000,
          before: async () => {
            firstPhaseRan = true;
          },
        },
        { name: 'broken sweep', durationMs: 500, serviceClock: { fromMs: Number.NaN, toMs: TO_MS } },
      ],
    };
    await expect(runScenario(options(scenario, sim))).rejects.toThrow(
      /the service clock of phase "broken sweep": serviceClock must be whole Unix ms with 0 ≤ fromMs ≤ toMs, got fromMs NaN/,
    );
    expect(firstPhaseRan).toBe(false);
  });

  test('a fromMs the service clock has passed fails the run, saying so', async () => {
    const past = monthEnd({ fromMs: Date.parse('2027-01-01T00:00:00Z'), toMs: TO_MS });
    await expect(runScenario(options(past, sim))).rejects.toThrow(
      /later than the start of phase "across the month end" from 2027-01-01T00:00:00\.000Z: the clock never goes back\. Set clock: \{ startAt: '2027-01-01T00:00:00\.000Z' \}/,
    );
  });
});
