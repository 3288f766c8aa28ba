/**
 * credits-drain: many concurrent verifications on a few usage-limited keys, more verifications
 * than credits. However the requests interleave, each key admits exactly credits / cost of them:
 * the end-of-run checks assert that exact VALID count and that every balance ends at 0.
 *
 * The numbers are planned, not sampled: the drain phase sends round(rate × duration) requests
 * (open model), spread round-robin over the keys, and the keys together hold credits for half of
 * them, so every key is over-asked about twice. The warm-up reads keys only, so it consumes
 * nothing and every verification that consumes is in the measured phase.
 *
 * Under a promise set whose regions drift (`--consistency production`), the final reads wait for
 * the regions to converge, and the VALID count may exceed the credits by what the regions could
 * over-spend (support/promised.ts): within that bound the checks pass, beyond it they fail.
 */
import {
  type CreatedKey,
  type MixEntry,
  type PhaseSpec,
  type ScenarioContext,
  checkResult,
  codeCount,
  createKey,
  createTaggedApi,
  cutOff,
  defineScenario,
  isInt,
  isRecord,
  notJudged,
  okData,
  serverErrors,
  shown,
  transportErrors,
  unexpectedCodes,
  withoutAnswerText,
} from '../src/index.js';
import { plannedCount } from './support/common.js';
import { lostReadsReason, readKeys, remainingOf } from './support/final-reads.js';
import { convergeBeforeFinalReads, exactly, overSpendAllowance, regionsCounted } from './support/promised.js';

/** Credits per verification: the expected VALID count is credits / COST. */
const COST = 2;
/** Shares of the credits per key (uneven on purpose): at most 4/10 of half the requests on a key that gets a quarter. */
const SHARES = [1, 2, 3, 4] as const;

interface DrainKey extends CreatedKey {
  credits: number;
  /** Verifications this key admits: credits / COST. */
  units: number;
}

interface DrainFixtures {
  keys: DrainKey[];
  /** Verifications the drain phase plans: round(rate × durationMs / 1000). */
  planned: number;
  /** Verifications built per key (round-robin), counted as the runner builds them. */
  built: number[];
  next: number;
  /** The regions that answered the drain (x-keysim-region), for the over-spend bound. */
  regions: Set<string>;
}

/** The warm-up's mix: reads that consume nothing, so the drain starts from the full balances. */
const readOnlyMix: ReadonlyArray<MixEntry<DrainFixtures>> = [
  {
    name: 'getKey before the drain',
    weight: 1,
    build: (f, random) => ({ op: 'keys.getKey', body: { keyId: (f.keys[random.int(f.keys.length)] as DrainKey).keyId } }),
    check(r, f) {
      const d = okData(r);
      if (typeof d === 'string') return d;
      const key = f.keys.find((k) => k.keyId === d.keyId);
      return key !== undefined && isRecord(d.credits) && d.credits.remaining === key.credits
        ? undefined
        : `expected the full balance before the drain, got ${shown(r)}`;
    },
  },
];

async function setup(ctx: ScenarioContext): Promise<DrainFixtures> {
  const { rate, durationMs, model } = ctx.settings;
  const planned = plannedCount(rate, durationMs);
  if (model === 'closed') ctx.log('credits-drain plans an exact number of requests in the open model; with the closed model only the balance checks are exact');
  // Credits for half the planned verifications, split by SHARES: the busiest key can admit 4/20 of
  // the requests while it receives 5/20 of them.
  const totalUnits = Math.max(SHARES.length, Math.floor(planned / 2));
  const shareSum = SHARES.reduce((a, b) => a + b, 0);
  const unitsPerKey = SHARES.map((share) => Math.max(1, Math.floor((totalUnits * share) / shareSum)));
  const apiId = await createTaggedApi(ctx, 'credits-drain');
  const keys: DrainKey[] = [];
  for (const [i, units] of unitsPerKey.entries()) {
    const credits = units * COST;
    const created = await createKey(ctx, { apiId, name: `${ctx.tag}-drain-${i}`, credits: { remaining: credits } });
    keys.push({ ...created, credits, units });
  }
  ctx.log(
    `credits-drain: ${keys.length} keys holding ${keys.reduce((n, k) => n + k.units, 0)} verifications of cost ${COST}; ${planned} verifications planned`,
  );
  return { keys, planned, built: keys.map(() => 0), next: 0, regions: new Set() };
}

export default defineScenario<DrainFixtures>({
  name: 'credits-drain',
  // The service rules it exercises and judges (src/load/rules/rules.ts).
  rules: ['credits.cost-many', 'credits.valid-decrements', 'credits.exceeded-keeps-balance'],
  description: 'Concurrent verifications on a few usage-limited keys until they run dry: exactly credits/cost VALID, balances 0',
  defaults: { rate: 400, durationMs: 5_000, warmupMs: 1_000, model: 'open' },
  setup,
  mix: [
    {
      name: 'verifyKey drain',
      weight: 1,
      build(f) {
        const index = f.next++ % f.keys.length;
        f.built[index] = (f.built[index] ?? 0) + 1;
        const key = f.keys[index] as DrainKey;
        return { op: 'keys.verifyKey', body: { key: key.key, credits: { cost: COST } } };
      },
      check(r, f) {
        if (r.region !== undefined) f.regions.add(r.region);
        const d = okData(r);
        if (typeof d === 'string') return d;
        const key = f.keys.find((k) => k.keyId === d.keyId);
        if (key === undefined) return `keyId ${String(d.keyId)} is not one of the drained keys`;
        if (!isInt(d.credits) || d.credits < 0 || d.credits > key.credits || d.credits % COST !== 0)
          return `credits ${String(d.credits)} outside 0..${key.credits} in steps of ${COST}`;
        if (d.code === 'VALID') return d.valid === true && d.credits <= key.credits - COST ? undefined : `inconsistent VALID answer ${shown(r)}`;
        if (d.code === 'USAGE_EXCEEDED')
          return d.valid === false && d.credits < COST ? undefined : `USAGE_EXCEEDED with ${String(d.credits)} credits left (cost ${COST})`;
        return `expected VALID or USAGE_EXCEEDED, got ${shown(r)}`;
      },
    },
  ],
  phases(ctx, f) {
    const warmup: PhaseSpec<DrainFixtures> = { name: 'warm-up (reads only)', durationMs: ctx.settings.warmupMs, warmup: true, mix: readOnlyMix };
    const drain: PhaseSpec<DrainFixtures> = { name: 'drain', durationMs: ctx.settings.durationMs, rate: ctx.settings.rate };
    if (plannedCount(ctx.settings.rate, ctx.settings.durationMs) !== f.planned) throw new Error('credits-drain: the settings changed between setup and phases');
    return ctx.settings.warmupMs > 0 ? [warmup, drain] : [drain];
  },
  async finish(ctx, f, results) {
    const verify = results.operation('keys.verifyKey');
    const valid = codeCount(verify, 'VALID');
    const exceeded = codeCount(verify, 'USAGE_EXCEEDED');
    const answered = valid + exceeded;
    // Failed requests (no answer, a gateway's page, a 5xx) are among `requests`; cut-off ones are
    // not. Either may have consumed credits.
    const failed = transportErrors(verify) + serverErrors(verify);
    const cut = cutOff(verify);
    const lost = failed + cut;
    const totalUnits = f.keys.reduce((n, k) => n + k.units, 0);
    const builtTotal = f.built.reduce((a, b) => a + b, 0);
    await convergeBeforeFinalReads(ctx);
    const reads = await readKeys(
      ctx,
      f.keys.map((k) => k.keyId),
    );
    const balances = reads.data.map((d) => {
      const remaining = remainingOf(d);
      return remaining === null || Number.isNaN(remaining) ? null : remaining;
    });
    // The balances read at the end: one that never came leaves the checks on them unjudged.
    const unread = reads.lost.count > 0 ? reads.lost : undefined;
    const consumedUnits = f.keys.reduce((n, k, i) => n + (k.credits - (balances[i] ?? 0)) / COST, 0);

    // The runner builds a request only when it sends it, so `built` counts what each key was
    // asked, and each key admits min(units, asked): exactly totalUnits when nothing was dropped.
    // Every built request is answered, failed or cut off at the end of a closed-model phase; if
    // some are missing (a stopped run), only the plain bound min(credits, answered) is left.
    const everyBuiltAnswered = builtTotal === answered + lost;
    const admittedPerKey = f.keys.map((k, i) => Math.min(k.units, f.built[i] ?? 0));
    const expectedValid = everyBuiltAnswered ? admittedPerKey.reduce((a, b) => a + b, 0) : Math.min(totalUnits, answered);
    const balancesAsExpected =
      lost === 0 && everyBuiltAnswered
        ? f.keys.every((k, i) => balances[i] === k.credits - COST * (admittedPerKey[i] ?? 0)) && (builtTotal < f.planned || balances.every((b) => b === 0))
        : balances.every((b, i) => b !== null && b >= 0 && b <= (f.keys[i] as DrainKey).credits);
    // What the regions may over-spend under the promise set in force (0 under exact).
    const regions = regionsCounted(f.regions, ctx.promises);
    const allowed = overSpendAllowance(admittedPerKey, regions, ctx.settings.durationMs, ctx.promises);
    const promised = exactly(ctx) ? '' : `; ${ctx.promises.name} promises: up to ${allowed} more from ${regions} regions' counters`;
    const checks = [
      checkResult(
        'exact VALID count',
        lost === 0 && allowed === 0 ? valid === expectedValid : valid <= expectedValid + allowed && valid >= expectedValid - lost,
        `${valid} VALID, expected ${expectedValid} (credits for ${totalUnits} verifications of cost ${COST}; ${f.planned} planned, ${builtTotal} sent, ${results.totals.dropped} dropped, ${withoutAnswerText(lost, cut, 'without answer')}${promised})`,
      ),
      unread !== undefined
        ? notJudged('balances drained', unread.count, lostReadsReason(unread))
        : checkResult(
            'balances drained',
            balancesAsExpected,
            f.keys.map((k, i) => `${k.keyId}: ${String(balances[i])} left of ${k.credits} after ${f.built[i] ?? 0} verifications`).join('; '),
          ),
      unread !== undefined
        ? notJudged('credits consumed = VALID answers', unread.count, lostReadsReason(unread))
        : checkResult(
            'credits consumed = VALID answers',
            lost === 0 && allowed === 0 ? consumedUnits === valid : consumedUnits >= valid - allowed && consumedUnits <= valid + lost,
            `${consumedUnits} verifications' worth of credits consumed, ${valid} VALID answers${promised}`,
          ),
      checkResult(
        'every verification answered VALID or USAGE_EXCEEDED',
        unexpectedCodes(verify, ['VALID', 'USAGE_EXCEEDED']).length === 0 && answered + failed === (verify?.requests ?? 0),
        `${answered} answered, ${failed} without answer, ${verify?.requests ?? 0} requests; other codes: ${unexpectedCodes(verify, ['VALID', 'USAGE_EXCEEDED']).join(', ') || 'none'}`,
      ),
    ];
    if (ctx.settings.model === 'open') {
      checks.push(
        checkResult(
          'planned verifications sent',
          // totals.dropped covers every phase (the warm-up too), hence the inequality.
          (verify?.requests ?? 0) <= f.planned && (verify?.requests ?? 0) + results.totals.dropped >= f.planned,
          `${verify?.requests ?? 0} sent, ${results.totals.dropped} dropped in the run, ${f.planned} planned (round(rate × duration))`,
        ),
      );
    }
    return checks;
  },
  thresholds: ['errors == 0', 'checks == 0'],
});
