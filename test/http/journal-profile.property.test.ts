/**
 * Property: on the production profile, the journal's replay answers what the simulator answered,
 * request by request, for any seed, any figures (regions, counter life, cache freshness, replay
 * delays) and any short sequence of (region, operation, clock step) — verifications with credits
 * and rate limits, credit and key changes, overrides, rate-limit checks, clock moves across
 * counter lives and replay delays. Before the journal starts, the same kind of traffic leaves the
 * regions warm and debits buffered: the start is a sync point (ProductionProfile#syncPoint), and
 * the replay, a fresh profile over its snapshot, must still decide every later call the same way.
 * Run in process through the simulator's own `executeCall` with each call's region, then replayed
 * by `JournalReplayer` as the oracle replays it.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Engine, ManualClock, ProductionProfile, type ProductionFigures } from '../../src/engine/index.js';
import { ApiRateLimiter } from '../../src/http/api-rate-limit.js';
import { executeCall } from '../../src/http/engine-backend.js';
import { replyBody } from '../../src/http/envelope.js';
import { FaultInjector } from '../../src/http/faults.js';
import { Journal, JournalReplayer, type JournalStart, nodeSha256, OPERATIONS } from '../../src/http/index.js';
import { regionContexts } from '../../src/http/regions.js';
import type { Route, RouteContext } from '../../src/http/route.js';
import { ROUTES } from '../../src/http/routes.js';
import { assertProperty } from '../helpers/property.js';

const START_MS = Date.parse('2027-01-31T23:58:00Z');

function routeOf(path: string): Route {
  const route = ROUTES.find((r) => r.path === path);
  if (route === undefined) throw new Error(`no route ${path}`);
  return route;
}

interface Answer {
  status: number;
  body: unknown;
}

/** The simulator's state on the production profile, as createSimulator builds it, without the transport. */
function profileSimulator(seed: number, figures: Partial<ProductionFigures>) {
  const clock = new ManualClock(START_MS);
  const engine = new Engine({ clock, seed, compat: 'production', sha256: nodeSha256 });
  const created = engine.admin.createWorkspace({ name: 'default' });
  if (!created.ok) throw new Error(created.error.detail);
  const { rootKey } = created.value;
  const profile = new ProductionProfile({ engine, ...figures });
  const ctx: RouteContext = {
    engine,
    clock,
    apiRateLimit: new ApiRateLimiter(),
    faults: new FaultInjector(engine, seed, OPERATIONS),
    journal: new Journal(nodeSha256),
    operatorRootKeyHash: nodeSha256(rootKey),
    reset: () => undefined,
  };
  ctx.regions = regionContexts(ctx, profile);
  const run = (region: number, path: string, input: unknown, seq?: number): Answer => {
    const route = routeOf(path);
    const outcome = executeCall(ctx, nodeSha256, { route, token: rootKey, input, region, ...(seq === undefined ? {} : { seq }) });
    if (!outcome.ok) return { status: outcome.problem.status, body: outcome.problem.identifier };
    return { status: 200, body: (replyBody(route, 'r', outcome.reply) as { data?: unknown }).data };
  };
  return { ctx, clock, profile, run };
}

type Op =
  | { kind: 'verify'; key: number; cost: number }
  | { kind: 'verify-limited'; key: number; cost: number }
  | { kind: 'limit'; who: number; cost: number }
  | { kind: 'set-credits' | 'add-credits'; key: number; value: number }
  | { kind: 'enable'; key: number; enabled: boolean }
  | { kind: 'set-override'; who: number; limit: number }
  | { kind: 'delete-override'; who: number }
  | { kind: 'get-key'; key: number }
  | { kind: 'clock-advance'; byMs: number };

interface Step {
  region: number;
  op: Op;
  /** The clock moved by the test between calls (not journaled: the next entry's instant carries it). */
  stepMs: number;
}

const LIMIT = 4;
const DURATION_MS = 10_000;

const keyArb = fc.integer({ min: 0, max: 1 });
const whoArb = fc.integer({ min: 0, max: 2 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('verify' as const), key: keyArb, cost: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('verify-limited' as const), key: keyArb, cost: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('limit' as const), who: whoArb, cost: fc.integer({ min: 0, max: 2 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constantFrom('set-credits' as const, 'add-credits' as const), key: keyArb, value: fc.integer({ min: 0, max: 12 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('enable' as const), key: keyArb, enabled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('set-override' as const), who: whoArb, limit: fc.integer({ min: 0, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete-override' as const), who: whoArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('get-key' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clock-advance' as const), byMs: fc.integer({ min: 1, max: 70_000 }) }) },
);

const stepArb = (regions: number): fc.Arbitrary<Step> =>
  fc.record({
    region: fc.integer({ min: 1, max: regions }),
    op: opArb,
    // Mostly nothing or a little, some across a replay delay, a cache's freshness or a counter's life.
    stepMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 2_000, max: 70_000 })),
  });

const caseArb = fc
  .record({
    seed: fc.integer({ min: 1, max: 0x7fff_ffff }),
    regions: fc.integer({ min: 1, max: 3 }),
    counterTtlMs: fc.integer({ min: 1_000, max: 60_000 }),
    cacheFreshMs: fc.integer({ min: 1, max: 20_000 }),
    delayMin: fc.integer({ min: 1, max: 3_000 }),
    delaySpan: fc.integer({ min: 0, max: 5_000 }),
    startRegion: fc.integer({ min: 1, max: 3 }),
  })
  .chain((c) =>
    fc.record({
      c: fc.constant(c),
      before: fc.array(stepArb(c.regions), { maxLength: 15 }),
      steps: fc.array(stepArb(c.regions), { minLength: 1, maxLength: 40 }),
    }),
  );

function callOf(op: Op, keys: readonly { key: string; keyId: string }[]): { path: string; input: unknown } {
  const key = (i: number) => keys[i] as { key: string; keyId: string };
  const limitOf = (who: number, cost: number) => ({ namespace: 'ns', identifier: `id-${who}`, limit: LIMIT, duration: DURATION_MS, cost });
  switch (op.kind) {
    case 'verify':
      return { path: '/v2/keys.verifyKey', input: { key: key(op.key).key, credits: { cost: op.cost } } };
    case 'verify-limited':
      return { path: '/v2/keys.verifyKey', input: { key: key(op.key).key, ratelimits: [{ name: 'r', limit: LIMIT, duration: DURATION_MS, cost: op.cost }] } };
    case 'limit':
      return { path: '/v2/ratelimit.limit', input: limitOf(op.who, op.cost) };
    case 'set-credits':
      return { path: '/v2/keys.updateCredits', input: { keyId: key(op.key).keyId, operation: 'set', value: op.value } };
    case 'add-credits':
      return { path: '/v2/keys.updateCredits', input: { keyId: key(op.key).keyId, operation: 'increment', value: Math.max(1, op.value) } };
    case 'enable':
      return { path: '/v2/keys.updateKey', input: { keyId: key(op.key).keyId, enabled: op.enabled } };
    case 'set-override':
      return { path: '/v2/ratelimit.setOverride', input: { namespace: 'ns', identifier: `id-${op.who}`, limit: op.limit, duration: DURATION_MS } };
    case 'delete-override':
      return { path: '/v2/ratelimit.deleteOverride', input: { namespace: 'ns', identifier: `id-${op.who}` } };
    case 'get-key':
      return { path: '/v2/keys.getKey', input: { keyId: key(op.key).keyId } };
    case 'clock-advance':
      return { path: '/_sim/clock.advance', input: { byMs: op.byMs } };
  }
}

describe('journal replay on the production profile', () => {
  test('for any seed, figures and sequence of (region, operation, clock step), the replay answers what the profile answered', () => {
    const seed = Number(process.env.KEYSIM_FC_SEED ?? (Math.random() * 0x7fff_ffff) | 0);
    console.log(`journal replay on the production profile: fast-check seed ${seed} (replay: KEYSIM_FC_SEED=${seed})`);
    assertProperty(
      fc.property(caseArb, ({ c, before, steps }) => {
        const figures = {
          regions: c.regions,
          counterTtlMs: c.counterTtlMs,
          cacheFreshMs: c.cacheFreshMs,
          replayDelayMs: { min: c.delayMin, max: c.delayMin + c.delaySpan },
        };
        const sim = profileSimulator(c.seed, figures);
        sim.run(1, '/_sim/namespaces.create', { name: 'ns' });
        const { apiId } = sim.run(1, '/v2/apis.createApi', { name: 'a' }).body as { apiId: string };
        const keys = [0, 1].map(
          (i) =>
            sim.run(1 + (i % c.regions), '/v2/keys.createKey', {
              apiId,
              credits: i === 0 ? { remaining: 10 } : { remaining: 6, refill: { interval: 'daily', amount: 5 } },
            }).body as { key: string; keyId: string },
        );
        const play = (step: Step, seq?: number): Answer => {
          sim.clock.advance(step.stepMs);
          const { path, input } = callOf(step.op, keys);
          return sim.run(step.region, path, input, seq);
        };
        // Warm regions, buffered debits and unpublished rate-limit counts before the journal starts.
        for (const step of before) play(step);
        const start = sim.run(1 + ((c.startRegion - 1) % c.regions), '/_sim/journal.start', {}).body as JournalStart;
        expect(start.profile).toEqual({ name: 'production', figures: sim.profile.figures });
        expect(sim.profile.stats().pendingDebits).toBe(0);

        const received = steps.map((step, seq) => play(step, seq));
        const replayer = JournalReplayer.create(start);
        const { entries } = sim.ctx.journal.take(1_000_000);
        expect(entries).toHaveLength(steps.length);
        for (const entry of entries) {
          const replayed = replayer.apply(entry);
          const seq = entry.seq as number;
          expect(entry.region).toBe((steps[seq] as Step).region);
          const got = received[seq] as Answer;
          const want = { status: replayed.status, body: replayed.status === 200 ? (replayed.body as { data?: unknown }).data : got.body };
          if (JSON.stringify(want) !== JSON.stringify(got)) {
            throw new Error(
              `request ${seq} (${entry.path} in region ${entry.region} at ${entry.atMs}): replay ${JSON.stringify(want)}, profile ${JSON.stringify(got)}`,
            );
          }
          if (replayed.status !== 200) expect((replayed.body as { error?: { type?: string } }).error?.type).toContain(String(got.body).split(':').at(-1));
        }
      }),
      { numRuns: 200, seed },
    );
  });
});
