/**
 * Property: on a running clock, the journal's replay answers what the simulator answered, request
 * by request, however the clock moves between and during requests. Random window lengths, limits
 * and costs; the real time jumps between requests (often onto or just across a window edge) and
 * moves on every single read of the clock. Run in process through the simulator's own
 * `executeCall` (what both the single-process server and the engine owner of `--workers` run),
 * then replayed by `JournalReplayer` as the oracle replays it.
 */
import fc from 'fast-check';
import { describe, test } from 'vitest';
import { Engine, SystemClock } from '../../src/engine/index.js';
import { ApiRateLimiter } from '../../src/http/api-rate-limit.js';
import { executeCall } from '../../src/http/engine-backend.js';
import { replyBody } from '../../src/http/envelope.js';
import { FaultInjector } from '../../src/http/faults.js';
import { Journal, JournalReplayer, type JournalStart, nodeSha256, OPERATIONS } from '../../src/http/index.js';
import type { Route, RouteContext } from '../../src/http/route.js';
import { ROUTES } from '../../src/http/routes.js';
import { assertProperty } from '../helpers/property.js';

const START_MS = Date.parse('2027-06-01T00:00:00Z');

function routeOf(path: string): Route {
  const route = ROUTES.find((r) => r.path === path);
  if (route === undefined) throw new Error(`no route ${path}`);
  return route;
}

/** A simulator's state on a system clock whose real time the test moves: `tick` per read, `jump` at will. */
function runningSimulator(tickMs: number) {
  let real = 1_000_000;
  const clock = new SystemClock(() => (real += tickMs), START_MS);
  const engine = new Engine({ clock, seed: 4, compat: 'interface', sha256: nodeSha256 });
  const created = engine.admin.createWorkspace({ name: 'default' });
  if (!created.ok) throw new Error(created.error.detail);
  const { rootKey } = created.value;
  const ctx: RouteContext = {
    engine,
    clock,
    apiRateLimit: new ApiRateLimiter(),
    faults: new FaultInjector(engine, 4, OPERATIONS),
    journal: new Journal(nodeSha256),
    operatorRootKeyHash: nodeSha256(rootKey),
    reset: () => undefined,
  };
  const run = (path: string, input: unknown, seq?: number) => {
    const route = routeOf(path);
    const outcome = executeCall(ctx, nodeSha256, { route, token: rootKey, input, ...(seq === undefined ? {} : { seq }) });
    if (!outcome.ok) return { status: outcome.problem.status, body: outcome.problem.identifier };
    return { status: 200, body: (replyBody(route, 'r', outcome.reply) as { data?: unknown }).data };
  };
  return { ctx, run, jump: (ms: number) => (real += ms) };
}

type Op = { kind: 'limit' | 'multi' | 'verify'; who: number; cost: number; gapMs: number };

const opArb = (durationMs: number): fc.Arbitrary<Op> =>
  fc.record({
    kind: fc.constantFrom('limit' as const, 'multi' as const, 'verify' as const),
    who: fc.integer({ min: 0, max: 2 }),
    cost: fc.integer({ min: 0, max: 4 }),
    // Mostly small steps, some of a whole window or more, some landing a hair from an edge.
    gapMs: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 2 * durationMs }), fc.integer({ min: durationMs - 3, max: durationMs + 3 })),
  });

const caseArb = fc
  .record({
    durationMs: fc.integer({ min: 1_000, max: 5_000 }),
    limit: fc.integer({ min: 1, max: 12 }),
    tickMs: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 4 }), weight: 4 }, { arbitrary: fc.constant(0), weight: 1 }),
  })
  .chain((c) => fc.record({ c: fc.constant(c), ops: fc.array(opArb(c.durationMs), { minLength: 1, maxLength: 60 }) }));

describe('journal replay on a running clock', () => {
  test('the replay answers what the simulator answered, request by request, whatever the clock did between and during requests', () => {
    const seed = Number(process.env.KEYSIM_FC_SEED ?? (Math.random() * 0x7fff_ffff) | 0);
    console.log(`journal replay on a running clock: fast-check seed ${seed} (replay: KEYSIM_FC_SEED=${seed})`);
    assertProperty(
      fc.property(caseArb, ({ c, ops }) => {
        const sim = runningSimulator(c.tickMs);
        const started = sim.run('/_sim/journal.start', {});
        const start = started.body as JournalStart;
        sim.run('/_sim/namespaces.create', { name: 'ns' });
        const created = sim.run('/v2/keys.createKey', {
          apiId: (sim.run('/v2/apis.createApi', { name: 'a' }).body as { apiId: string }).apiId,
          credits: { remaining: 1_000 },
        });
        const { key } = created.body as { key: string };
        const limitOf = (who: number, cost: number) => ({ namespace: 'ns', identifier: `id-${who}`, limit: c.limit, duration: c.durationMs, cost });
        const received = new Map<number, unknown>();
        ops.forEach((op, seq) => {
          sim.jump(op.gapMs);
          const answer =
            op.kind === 'limit'
              ? sim.run('/v2/ratelimit.limit', limitOf(op.who, op.cost), seq)
              : op.kind === 'multi'
                ? sim.run('/v2/ratelimit.multiLimit', [limitOf(op.who, op.cost), limitOf((op.who + 1) % 3, 1)], seq)
                : sim.run('/v2/keys.verifyKey', { key, ratelimits: [{ name: `r-${op.who}`, limit: c.limit, duration: c.durationMs, cost: op.cost }] }, seq);
          received.set(seq, answer);
        });
        const replayer = JournalReplayer.create(start);
        const { entries } = sim.ctx.journal.take(1_000_000);
        for (const entry of entries) {
          const replayed = replayer.apply(entry);
          if (entry.seq === undefined) continue;
          const body = replayed.status === 200 ? (replayed.body as { data?: unknown }).data : (replayed.body as { error?: { type?: string } }).error?.type;
          const got = received.get(entry.seq) as { status: number; body: unknown };
          const want = { status: replayed.status, body: replayed.status === 200 ? body : got.body };
          if (JSON.stringify(want) !== JSON.stringify(got)) {
            throw new Error(`request ${entry.seq} (${entry.path} at ${entry.atMs}): replay ${JSON.stringify(want)}, simulator ${JSON.stringify(got)}`);
          }
        }
        return entries.filter((e) => e.seq !== undefined).length === ops.length;
      }),
      { numRuns: 300, seed },
    );
  });
});
