/**
 * ratelimit-rules: the rate-limit rules no window edge is needed for, on a live target (no clock
 * control; it runs on the simulator too). Day-long windows, so that nothing rolls during a run
 * (unless it straddles a UTC midnight, as smoke's walk-through).
 *
 * Load (cost 0: always admitted, counts nothing, so every answer is exact under concurrency):
 *   `<tag>-rr-any-<n>` matched only by the wildcard override `<tag>-rr-any-*` → its limit, its id;
 *   `<tag>-rr-any-vip` matched by the wildcard and by an exact override → the exact one's.
 * End of run, in order, on identifiers of their own (an answer that never came leaves its check
 * "not judged": what follows it on the same identifier is unknown):
 *   cost > 1   limit 10, cost 4 → 6 left, cost 4 → 2 left, cost 4 → refused (counts nothing), cost 2 → 0 left;
 *   multiLimit A (limit 5) and B (limit 1) together → passed; again → refused because of B; then a
 *              cost-0 check of A → 4 left: the refused multiLimit counted nothing on A either.
 */
import {
  type CallOutcome,
  type CheckResult,
  LostAnswers,
  type MixEntry,
  type ScenarioContext,
  callOutcome,
  checkResult,
  defineScenario,
  deleteQuietly,
  ensureNamespace,
  isRecord,
  notJudged,
  okData,
  readOutcome,
  sameJson,
  shown,
} from '../src/index.js';
import { exactly, rateLimitBand, regionsCounted } from './support/promised.js';

const DAY_MS = 86_400_000;
const REQUEST = { limit: 100, duration: DAY_MS };
const WILDCARD_LIMIT = 3;
const EXACT_LIMIT = 5;

interface RateRulesFixtures {
  namespace: string;
  anyPrefix: string;
  vip: string;
  wildcardId: string;
  exactId: string;
}

async function setOverride(ctx: ScenarioContext, namespace: string, identifier: string, limit: number): Promise<string> {
  const { overrideId } = await ctx.api.data<{ overrideId: string }>('ratelimit.setOverride', { namespace, identifier, limit, duration: DAY_MS });
  ctx.onCleanup(() => deleteQuietly(ctx, 'ratelimit.deleteOverride', { namespace, identifier }));
  return overrideId;
}

async function setup(ctx: ScenarioContext): Promise<RateRulesFixtures> {
  const namespace = await ensureNamespace(ctx, 'rules');
  const anyPrefix = `${ctx.tag}-rr-any-`;
  const vip = `${anyPrefix}vip`;
  const wildcardId = await setOverride(ctx, namespace, `${anyPrefix}*`, WILDCARD_LIMIT);
  const exactId = await setOverride(ctx, namespace, vip, EXACT_LIMIT);
  return { namespace, anyPrefix, vip, wildcardId, exactId };
}

/** A cost-0 answer: admitted, nothing counted, the override's limit and id. */
function untouched(limit: number, overrideId: string) {
  return (r: Parameters<NonNullable<MixEntry<RateRulesFixtures>['check']>>[0]): string | undefined => {
    const d = okData(r);
    if (typeof d === 'string') return d;
    return d.success === true && d.limit === limit && d.remaining === limit && d.overrideId === overrideId
      ? undefined
      : `expected success, limit ${limit}, remaining ${limit}, overrideId ${overrideId}: got ${shown(r)}`;
  };
}

const mix: ReadonlyArray<MixEntry<RateRulesFixtures>> = [
  {
    name: 'limit cost 0, wildcard override',
    weight: 2,
    rules: ['ratelimit.override-wildcard', 'ratelimit.cost-zero'],
    build: (f, random) => ({ op: 'ratelimit.limit', body: { namespace: f.namespace, identifier: `${f.anyPrefix}${random.int(50)}`, ...REQUEST, cost: 0 } }),
    check: (r, f) => untouched(WILDCARD_LIMIT, f.wildcardId)(r),
  },
  {
    name: 'limit cost 0, exact beats wildcard',
    weight: 1,
    rules: ['ratelimit.override-exact', 'ratelimit.override-wildcard', 'ratelimit.cost-zero'],
    build: (f) => ({ op: 'ratelimit.limit', body: { namespace: f.namespace, identifier: f.vip, ...REQUEST, cost: 0 } }),
    check: (r, f) => untouched(EXACT_LIMIT, f.exactId)(r),
  },
];

/**
 * One step of the walk: its answer's data (or what was wrong with it), or `undefined` when it
 * never came — then what follows it on the same identifier is unknown and its check not judged.
 */
type Step = Record<string, unknown> | string | undefined;

/** The rules the walk's two checks judge. */
const COST_RULES = ['ratelimit.cost-many', 'ratelimit.limit-exact'];
const MULTI_RULES = ['ratelimit.multi-all-or-nothing'];

/**
 * The cost walk under a drifting promise set: each admission must leave the window within the
 * band's upper bound, each denial come only once the band allows one (regions: those the answers
 * named, else the set's); the exact answer is always within it.
 */
function costWalkInBand(
  ctx: ScenarioContext,
  seen: readonly unknown[],
  costs: readonly number[],
  regions: number,
  name: string,
  expected: unknown,
): CheckResult {
  // The checkers' band: each region may add one request of the largest cost the limit saw.
  const band = rateLimitBand(10, regions, ctx.promises, Math.max(0, ...costs));
  let used = 0;
  const problems: string[] = [];
  for (const [i, answer] of seen.entries()) {
    const cost = costs[i] ?? 0;
    const [success, remaining] = Array.isArray(answer) ? (answer as unknown[]) : [undefined, undefined];
    if (typeof success !== 'boolean' || typeof remaining !== 'number' || remaining < 0 || remaining > 10)
      problems.push(`step ${i + 1}: ${JSON.stringify(answer)}`);
    else if (success && used + cost > band.admitUpTo) problems.push(`step ${i + 1} admitted cost ${cost} with ${used} used, beyond ${band.admitUpTo}`);
    else if (!success && used + cost <= band.denyAbove) problems.push(`step ${i + 1} denied cost ${cost} with ${used} used, within ${band.denyAbove}`);
    if (success === true) used += cost;
  }
  return checkResult(
    name,
    problems.length === 0,
    `costs ${costs.join(', ')} on limit 10: ${JSON.stringify(seen)} (exactly ${JSON.stringify(expected)}); ${ctx.promises.name} promises for ${regions} regions: admitted up to ${band.admitUpTo}, denied above ${band.denyAbove}${problems.length > 0 ? `: ${problems.join('; ')}` : ''}`,
    COST_RULES,
  );
}

/** The exact walk at the end: costs > 1, then multiLimit's all or nothing. */
async function walk(ctx: ScenarioContext, f: RateRulesFixtures): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const lost = new LostAnswers();
  const regions = new Set<string>();
  const step = async (outcome: Promise<CallOutcome>): Promise<Step> => {
    const o = await outcome;
    if (o.answered && o.response.region !== undefined) regions.add(o.response.region);
    if (o.answered) return okData(o.response);
    lost.note(o.why);
    return undefined;
  };
  const limitBody = (identifier: string, limit: number, cost: number) => ({ namespace: f.namespace, identifier, limit, duration: DAY_MS, cost });
  // A check of cost > 0 counts: a write, sent once. A check of cost 0 counts nothing: a read, asked again.
  const limitOnce = (identifier: string, limit: number, cost: number) =>
    step(
      cost === 0
        ? readOutcome(ctx, 'ratelimit.limit', limitBody(identifier, limit, cost))
        : callOutcome(ctx, 'ratelimit.limit', limitBody(identifier, limit, cost)),
    );

  const costName = 'rate limit: cost > 1 counts its cost, a refusal counts nothing';
  const costly = `${ctx.tag}-rr-cost`;
  const seen: unknown[] = [];
  const costs = [4, 4, 4, 2];
  for (const cost of costs) {
    const d = await limitOnce(costly, 10, cost);
    // Past a check whose answer never came, the identifier's count is unknown: the rest is not sent.
    if (d === undefined) break;
    seen.push(typeof d === 'string' ? d : [d.success, d.remaining]);
  }
  const expected = [
    [true, 6],
    [true, 2],
    [false, 0],
    [true, 0],
  ];
  results.push(
    lost.count > 0
      ? notJudged(costName, lost.count, `ratelimit.limit at step ${seen.length + 1} of 4: ${lost.text()}`, COST_RULES)
      : exactly(ctx)
        ? checkResult(
            costName,
            sameJson(seen, expected),
            `costs 4, 4, 4, 2 on limit 10: ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)}`,
            COST_RULES,
          )
        : costWalkInBand(ctx, seen, costs, regionsCounted(regions, ctx.promises), costName, expected),
  );

  const multiName = 'multiLimit: all or nothing';
  const multiLost = new LostAnswers();
  const a = `${ctx.tag}-rr-multi-a`;
  const b = `${ctx.tag}-rr-multi-b`;
  const both = [
    { namespace: f.namespace, identifier: a, limit: 5, duration: DAY_MS },
    { namespace: f.namespace, identifier: b, limit: 1, duration: DAY_MS },
  ];
  const passed = async (): Promise<unknown> => {
    const o = await callOutcome(ctx, 'ratelimit.multiLimit', both);
    if (!o.answered) {
      multiLost.note(o.why);
      return undefined;
    }
    const d = okData(o.response);
    return typeof d === 'string' ? d : d.passed;
  };
  const first = await passed();
  const second = multiLost.count > 0 ? undefined : await passed();
  if (multiLost.count > 0) {
    results.push(notJudged(multiName, multiLost.count, `ratelimit.multiLimit: ${multiLost.text()}`, MULTI_RULES));
    return results;
  }
  const read = await readOutcome(ctx, 'ratelimit.limit', limitBody(a, 5, 0));
  if (!read.answered) {
    results.push(notJudged(multiName, 1, `the cost-0 ratelimit.limit of A after the multiLimits: ${read.why}`, MULTI_RULES));
    return results;
  }
  const after = okData(read.response);
  const aLeft = typeof after === 'string' || !isRecord(after) ? after : after.remaining;
  results.push(
    checkResult(
      multiName,
      first === true && second === false && aLeft === 4,
      `A (limit 5) and B (limit 1) together: ${String(first)}, then ${String(second)}; A then has ${String(aLeft)} left (expected true, false, 4: the refused call counted nothing on A)`,
      MULTI_RULES,
    ),
  );
  return results;
}

export default defineScenario<RateRulesFixtures>({
  name: 'ratelimit-rules',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: [
    'ratelimit.override-exact',
    'ratelimit.override-wildcard',
    'ratelimit.cost-zero',
    'ratelimit.cost-many',
    'ratelimit.multi-all-or-nothing',
    'ratelimit.limit-exact',
  ],
  description: 'Wildcard and exact overrides, cost 0 and cost > 1, multiLimit all or nothing, on day-long windows; live-safe',
  defaults: { rate: 50, durationMs: 5_000, warmupMs: 1_000 },
  setup,
  mix,
  finish: (ctx, f) => walk(ctx, f),
  thresholds: ['errors == 0', 'checks == 0'],
});
