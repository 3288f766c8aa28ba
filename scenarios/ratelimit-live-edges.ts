/**
 * ratelimit-live-edges: bursts at the limit on both sides of real window edges, for live targets
 * (no clock control needed; it runs on the simulator too). For each window length (1 s and 5 s)
 * it takes a fresh rate-limit identifier (ratelimit.limit, limit 5) and a fresh key with credits
 * and an auto-applied key limit (limit 4), then:
 *
 * 1. waits for a window edge, found by cost-0 probes (they consume nothing) whose `reset` moves on;
 * 2. fires limit + 1 requests at once on each: a fresh window admits exactly the limit — one
 *    more is an off-by-one, one fewer a false refusal;
 * 3. waits for the next edge the same way and fires limit + 1 again right after it. The sliding
 *    window still weighs the full previous window there and admits next to nothing; a fixed
 *    window admits a full limit again. The bound (support/window-bounds.ts) is judged on keysim's
 *    own clock between the last probe before the edge and each answer after it, so a slow machine
 *    makes it inconclusive, never wrong;
 * 4. at the end, each key's balance is its credits less its VALID answers: a verification refused
 *    with RATE_LIMITED spends nothing.
 *
 * On the simulator's frozen clock the scenario moves the clock to each edge instead of waiting.
 * A burst that straddles an edge (a very slow machine) is retried once, then reported as not
 * judged. Everything the bursts send goes through the scenario's API, so `--history` records it
 * and the invariant checkers see it too. The phases' own load is a steady, light stream of
 * rate-limit checks on an identifier of its own.
 *
 * Under a promise set whose regions count apart (`--consistency production`) the bursts and the
 * windows are judged against the promised band (support/promised.ts) for the regions the answers
 * named (docs/consistency.md, "The rate-limit band").
 */
import {
  type CreatedKey,
  LostAnswers,
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  callOutcome,
  checkResult,
  createKey,
  createTaggedApi,
  defineScenario,
  ensureNamespace,
  isInt,
  isRecord,
  judgesExactly,
  notJudged,
  okData,
  readOutcome,
  shown,
} from '../src/index.js';
import { type EdgeProbes, awaitEdge } from './support/edge-probe.js';
import { rateLimitBand, regionsCounted } from './support/promised.js';
import { type Band, type CounterRecord, type Decision, checkWindowBounds, exactBurstProblem, localNowMs } from './support/window-bounds.js';

const DURATIONS_MS = [1_000, 5_000] as const;
const IDENTIFIER_LIMIT = 5;
const KEY_LIMIT = 4;
const KEY_CREDITS = 50;
/** A burst that straddles an edge is tried again this many times. */
const ATTEMPTS = 2;
const STEADY = { limit: 1_000, duration: 1_000 };
interface EdgeKey extends CreatedKey {
  counter: CounterRecord;
  /** Its verifications whose answer never came (or was no decision): each may have spent a credit. */
  unknown: number;
}

/** One burst on one counter: the decisions answered, and how many answers never came. */
interface BurstOutcome {
  decisions: Decision[];
  unknown: number;
}

interface LiveEdgeFixtures extends EdgeProbes {
  apiId: string;
  counters: CounterRecord[];
  keys: EdgeKey[];
  exactProblems: string[];
  exactJudged: number;
  exactStraddled: number;
  /** Bursts not judged because none of their answers came. */
  exactLost: number;
  answerProblems: string[];
  steadyIdentifier: string;
  /** The regions that answered (x-keysim-region), for the promised band. */
  regions: Set<string>;
}

/** The band a counter of `limit` is judged by: the limit itself under exact (support/promised.ts). */
function bandOf(ctx: ScenarioContext, f: LiveEdgeFixtures): (limit: number) => Band {
  // Every request of a burst costs 1: each region may add one, as the checkers' band allows.
  return (limit) => rateLimitBand(limit, regionsCounted(f.regions, ctx.promises), ctx.promises, 1);
}

/**
 * One rate-limit check of a burst: its decision, or undefined when its outcome is unknown (the
 * answer never came — counted in `lost` — or was malformed, which `answerProblems` reports).
 */
async function limitCall(ctx: ScenarioContext, f: LiveEdgeFixtures, counter: CounterRecord, identifier: string): Promise<Decision | undefined> {
  const invokeMs = localNowMs();
  const outcome = await callOutcome(ctx, 'ratelimit.limit', { namespace: f.namespace, identifier, limit: counter.limit, duration: counter.durationMs });
  const completeMs = localNowMs();
  if (!outcome.answered) {
    f.lost.note(outcome.why);
    return undefined;
  }
  const r = outcome.response;
  if (r.region !== undefined) f.regions.add(r.region);
  const d = okData(r);
  if (typeof d === 'string' || !isInt(d.reset) || typeof d.success !== 'boolean' || d.limit !== counter.limit) {
    f.answerProblems.push(`${counter.label}: ${typeof d === 'string' ? d : `malformed answer ${shown(r)}`}`);
    return undefined;
  }
  const decision = { invokeMs, completeMs, admitted: d.success, resetMs: d.reset };
  counter.decisions.push(decision);
  return decision;
}

/** One verification of a burst (cost 1): its decision, or undefined when its outcome is unknown (it may have spent). */
async function verifyCall(ctx: ScenarioContext, f: LiveEdgeFixtures, key: EdgeKey): Promise<Decision | undefined> {
  const invokeMs = localNowMs();
  const outcome = await callOutcome(ctx, 'keys.verifyKey', { key: key.key, credits: { cost: 1 } });
  const completeMs = localNowMs();
  if (!outcome.answered) {
    f.lost.note(outcome.why);
    key.unknown++;
    return undefined;
  }
  const r = outcome.response;
  if (r.region !== undefined) f.regions.add(r.region);
  const d = okData(r);
  const limit = typeof d === 'string' || !Array.isArray(d.ratelimits) ? undefined : (d.ratelimits[0] as unknown);
  if (typeof d === 'string' || !isRecord(limit) || !isInt(limit.reset) || (d.code !== 'VALID' && d.code !== 'RATE_LIMITED') || d.keyId !== key.keyId) {
    f.answerProblems.push(`${key.counter.label}: ${typeof d === 'string' ? d : `expected VALID or RATE_LIMITED with the key's limit, got ${shown(r)}`}`);
    key.unknown++;
    return undefined;
  }
  const decision = { invokeMs, completeMs, admitted: d.code === 'VALID', resetMs: limit.reset };
  key.counter.decisions.push(decision);
  return decision;
}

/** The decisions of calls made together, and how many of them have no known outcome. */
function burstOutcome(results: ReadonlyArray<Decision | undefined>): BurstOutcome {
  const decisions = results.filter((d): d is Decision => d !== undefined);
  return { decisions, unknown: results.length - decisions.length };
}

/**
 * limit + 1 requests at once on the identifier and on the key. Every call resolves (a lost answer
 * is an outcome, callOutcome never rejects), and all are awaited together: none is left behind.
 */
async function burst(
  ctx: ScenarioContext,
  f: LiveEdgeFixtures,
  identifier: string,
  idCounter: CounterRecord,
  key: EdgeKey,
): Promise<[BurstOutcome, BurstOutcome]> {
  const [ids, verifications] = await Promise.all([
    Promise.all(Array.from({ length: idCounter.limit + 1 }, () => limitCall(ctx, f, idCounter, identifier))),
    Promise.all(Array.from({ length: key.counter.limit + 1 }, () => verifyCall(ctx, f, key))),
  ]);
  return [burstOutcome(ids), burstOutcome(verifications)];
}

/** One round on fresh counters: a burst after an edge (exact), then one right after the next edge. */
async function round(ctx: ScenarioContext, f: LiveEdgeFixtures, durationMs: number, attempt: number): Promise<boolean> {
  const seconds = durationMs / 1000;
  const identifier = `${ctx.tag}-edge-${seconds}s-${attempt}`;
  const idCounter: CounterRecord = {
    label: `ratelimit.limit ${identifier} (${IDENTIFIER_LIMIT} per ${seconds} s)`,
    limit: IDENTIFIER_LIMIT,
    durationMs,
    decisions: [],
  };
  const created = await createKey(ctx, {
    apiId: f.apiId,
    name: `${identifier}-key`,
    credits: { remaining: KEY_CREDITS },
    ratelimits: [{ name: 'edge', limit: KEY_LIMIT, duration: durationMs, autoApply: true }],
  });
  const key: EdgeKey = {
    ...created,
    counter: { label: `key ${created.keyId} limit "edge" (${KEY_LIMIT} per ${seconds} s)`, limit: KEY_LIMIT, durationMs, decisions: [] },
    unknown: 0,
  };
  f.counters.push(idCounter, key.counter);
  f.keys.push(key);
  const firstEdge = await awaitEdge(ctx, f, durationMs);
  const [b1Id, b1Key] = await burst(ctx, f, identifier, idCounter, key);
  const band = bandOf(ctx, f);
  const exact = [
    exactBurstProblem(idCounter, b1Id.decisions, b1Id.unknown, band(idCounter.limit)),
    exactBurstProblem(key.counter, b1Key.decisions, b1Key.unknown, band(key.counter.limit)),
  ];
  await awaitEdge(ctx, f, durationMs, firstEdge + durationMs);
  await burst(ctx, f, identifier, idCounter, key);
  if (exact.includes('straddled')) return false;
  for (const p of exact) {
    if (p === 'not judged') f.exactLost++;
    else f.exactJudged++;
    if (p !== undefined && p !== 'straddled' && p !== 'not judged') f.exactProblems.push(p);
  }
  return true;
}

/** A key's balance at the end against its credits less its VALID answers, widened by the verifications whose outcome is unknown. */
async function balanceOf(ctx: ScenarioContext, k: EdgeKey): Promise<{ remaining: number | 'unknown'; text: string; problem: string | undefined }> {
  const valid = k.counter.decisions.filter((x) => x.admitted).length;
  const refused = k.counter.decisions.length - valid;
  // Each verification whose outcome is unknown may have been admitted and spent its credit.
  const hi = KEY_CREDITS - valid;
  const lo = hi - k.unknown;
  const expected = lo === hi ? `${hi}` : `${lo}..${hi} (${k.unknown} verifications without a known outcome)`;
  const outcome = await readOutcome(ctx, 'keys.getKey', { keyId: k.keyId });
  if (!outcome.answered)
    return { remaining: 'unknown', text: `${k.keyId}: not judged, its keys.getKey answer never came (${outcome.why})`, problem: undefined };
  const d = okData(outcome.response);
  const remaining = typeof d === 'string' || !isRecord(d.credits) ? undefined : d.credits.remaining;
  const text = `${k.keyId}: ${String(remaining)} credits left of ${KEY_CREDITS} after ${valid} VALID and ${refused} RATE_LIMITED, expected ${expected}`;
  if (typeof d === 'string') return { remaining: 'unknown', text, problem: `${k.keyId}: keys.getKey ${d}` };
  if (!isInt(remaining) || remaining < lo || remaining > hi) {
    const spentOnRefusals = isInt(remaining) && hi - remaining >= refused && refused > 0 && hi - remaining - refused <= k.unknown;
    return {
      remaining: isInt(remaining) ? remaining : 'unknown',
      text,
      problem: `${text}${spentOnRefusals ? ' (as if every RATE_LIMITED verification spent its cost)' : ''}`,
    };
  }
  return { remaining, text, problem: undefined };
}

const steadyMix: ReadonlyArray<MixEntry<LiveEdgeFixtures>> = [
  {
    name: 'ratelimit.limit steady',
    weight: 1,
    build: (f) => ({ op: 'ratelimit.limit', body: { namespace: f.namespace, identifier: f.steadyIdentifier, ...STEADY } }),
    check(r) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      return d.limit === STEADY.limit && isInt(d.remaining) && isInt(d.reset) && typeof d.success === 'boolean' ? undefined : `malformed answer ${shown(r)}`;
    },
  },
];

export default defineScenario<LiveEdgeFixtures>({
  name: 'ratelimit-live-edges',
  // The service rules it exercises and judges (src/load/rules/rules.ts); each check names its own.
  rules: ['ratelimit.sliding-window', 'ratelimit.limit-exact', 'ratelimit.key-limit-per-key', 'verify.rate-limited-spends-nothing', 'ratelimit.cost-zero'],
  description: 'Live-safe: bursts of limit + 1 right after real 1 s and 5 s window edges; exact limits, sliding (not fixed) windows, refusals spend nothing',
  defaults: { rate: 20, durationMs: 2_000, warmupMs: 0 },
  async setup(ctx) {
    const namespace = await ensureNamespace(ctx, 'live-edges');
    const apiId = await createTaggedApi(ctx, 'live-edges');
    return {
      namespace,
      apiId,
      probes: new Map(DURATIONS_MS.map((d) => [d, []])),
      counters: [],
      keys: [],
      exactProblems: [],
      exactJudged: 0,
      exactStraddled: 0,
      exactLost: 0,
      answerProblems: [],
      lost: new LostAnswers(),
      probesAnswered: 0,
      probesRefused: [],
      steadyIdentifier: `${ctx.tag}-steady`,
      manualClock: ctx.admin !== undefined && (await ctx.admin.clockMode()) === 'manual',
      regions: new Set(),
    };
  },
  mix: steadyMix,
  phases(ctx) {
    return DURATIONS_MS.map((durationMs): PhaseSpec<LiveEdgeFixtures> => ({
      name: `bursts at ${durationMs / 1000} s window edges`,
      durationMs: Math.max(500, Math.round(ctx.settings.durationMs / DURATIONS_MS.length)),
      async before(c, f) {
        for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
          if (await round(c, f, durationMs, attempt)) return;
          f.exactStraddled++;
          c.log(`ratelimit-live-edges: a burst of the ${durationMs} ms round straddled a window edge (a slow machine); trying again`);
        }
      },
    }));
  },
  async finish(ctx, f) {
    const bounds = DURATIONS_MS.map((d) =>
      checkWindowBounds(
        f.counters.filter((c) => c.durationMs === d),
        f.probes.get(d) ?? [],
        bandOf(ctx, f),
      ),
    );
    const problems = bounds.flatMap((b) => b.problems);
    const judged = bounds.reduce((n, b) => n + b.edgesJudged, 0);
    const seen = bounds.reduce((n, b) => n + b.edgesSeen, 0);
    const balances = await Promise.all(f.keys.map((k) => balanceOf(ctx, k)));
    const wrong = balances.filter((b) => b.problem !== undefined);
    const unread = balances.filter((b) => b.remaining === 'unknown');
    const lostNote = f.lost.count > 0 ? `; ${f.lost.count} answers never came, taken as unknown outcomes (${f.lost.text()})` : '';
    return [
      checkResult(
        'answers to the bursts well-formed',
        f.answerProblems.length === 0,
        f.answerProblems.length === 0 ? `all${lostNote}` : f.answerProblems.slice(0, 6).join('; '),
      ),
      checkResult(
        'exact admissions at the limit (limit + 1 asked in a fresh window)',
        f.exactProblems.length === 0,
        f.exactProblems.length > 0
          ? f.exactProblems.join('; ')
          : (f.exactJudged === 0 ? 'not judged: no burst could be judged; ' : '') +
              `${f.exactJudged} bursts admitted ${judgesExactly(ctx.promises) ? 'exactly their limit' : `within the ${ctx.promises.name} promises' band for ${regionsCounted(f.regions, ctx.promises)} regions`} (within what their unknown outcomes allow)` +
              (f.exactStraddled > 0 ? `; ${f.exactStraddled} rounds not judged (a burst straddled an edge: the machine was slow)` : '') +
              (f.exactLost > 0 ? `; ${f.exactLost} bursts not judged: none of their answers came` : ''),
        ['ratelimit.limit-exact', 'ratelimit.key-limit-per-key'],
      ),
      checkResult(
        'sliding window across real window edges',
        problems.length === 0,
        problems.length > 0
          ? problems.slice(0, 6).join('; ')
          : judged > 0
            ? `${judged} of ${seen} edges judged (the window before still weighed on the burst after it): within the sliding-window bound`
            : `inconclusive: ${seen} edges seen, none close enough to its burst to judge (a slow machine); nothing wrong seen`,
        ['ratelimit.sliding-window'],
      ),
      unread.length === balances.length && balances.length > 0
        ? notJudged('a verification refused by a rate limit spends no credits', unread.length, unread.map((b) => b.text).join('; '), [
            'verify.rate-limited-spends-nothing',
          ])
        : checkResult(
            'a verification refused by a rate limit spends no credits',
            wrong.length === 0,
            (wrong.length > 0 ? wrong : balances).map((b) => b.problem ?? b.text).join('; ') +
              (unread.length > 0 && wrong.length === 0 ? ` — not judged for ${unread.length} keys: their balance could not be read` : ''),
            ['verify.rate-limited-spends-nothing'],
          ),
      checkResult(
        'a rate-limit check of cost 0 is admitted and counts nothing',
        f.probesRefused.length === 0,
        f.probesRefused.length > 0 ? f.probesRefused.join('; ') : `${f.probesAnswered} cost-0 probes on one identifier of limit 1, all admitted`,
        ['ratelimit.cost-zero'],
      ),
    ];
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
